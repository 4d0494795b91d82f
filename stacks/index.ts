/** All stacks of a stage, in dependency order; sst.config.ts and the infra tests both use this. */
import { Stack, type App } from "sst/constructs";
import { Api } from "./api.js";
import { Events } from "./events.js";
import { Monitoring } from "./monitoring.js";
import { Storage } from "./storage.js";
import { acceptLambdaFindings } from "./service-function.js";
import { Web } from "./web.js";

export { Api, Events, Monitoring, Storage, Web };

export function addStacks(app: App, options: { web?: boolean } = {}): void {
  app.stack(Storage);
  app.stack(Events);
  app.stack(Api);
  app.stack(Monitoring);
  if (options.web !== false) app.stack(Web);
  // SST gives every stack a custom resource function of its own (CustomResourceHandler).
  for (const stack of app.node.children) if (stack instanceof Stack) acceptLambdaFindings(stack.customResourceHandler);
}
