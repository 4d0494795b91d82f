/**
 * SST v2 app: one stage per team (`npx sst deploy --stage <team>`), see docs/deploy.md. Stage
 * settings (SUMMARIZER, SUMMARIZER_MODEL, ...) come from the deploying shell; LLM keys from SSM.
 */
import type { SSTConfig } from "sst";
import { addStacks } from "./stacks/index.js";

export default {
  config(input) {
    return {
      name: "vancetope-memory",
      region: input.region ?? process.env.AWS_REGION ?? "us-east-1",
    };
  },
  stacks(app) {
    addStacks(app);
  },
} satisfies SSTConfig;
