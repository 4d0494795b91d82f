/** The stage config of an SST app, read once from the deploying shell's environment. */
import type { App } from "sst/constructs";
import { readStageConfig, type StageConfig } from "./stage.js";

const configs = new WeakMap<App, StageConfig>();

export function stageConfigOf(app: App): StageConfig {
  let config = configs.get(app);
  if (!config) {
    config = readStageConfig(app.stage, process.env);
    configs.set(app, config);
  }
  return config;
}
