/** All stacks of a stage, in dependency order; sst.config.ts and the infra tests both use this. */
import type { App } from "sst/constructs";
import { Api } from "./api.js";
import { Events } from "./events.js";
import { Storage } from "./storage.js";
import { Web } from "./web.js";

export { Api, Events, Storage, Web };

export function addStacks(app: App, options: { web?: boolean } = {}): void {
  app.stack(Storage);
  app.stack(Events);
  app.stack(Api);
  if (options.web !== false) app.stack(Web);
}
