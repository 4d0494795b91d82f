/** The composition root of the functions that summarize: secrets first, then the summarizer; the blob store from BLOB_BUCKET. */
import type { SSMClient } from "@aws-sdk/client-ssm";
import { createSummarizerFromEnv } from "../adapters/llm/create-summarizer.js";
import { loadLlmSecrets } from "../adapters/secrets/llm-secrets.js";
import type { Log } from "../ports/logger.js";
import type { Tracing } from "../ports/tracing.js";
import { createDeps } from "./create-deps.js";
import { withBlobStore } from "./blob-store.js";
import { withWorkerInvoker } from "./worker-events.js";

export interface SummarizingDepsOptions {
  /** The SSM client the keys are read with; default: one for the function's region. */
  ssmClient?: SSMClient;
  /** Default: the Powertools logger of createDeps. */
  log?: Log;
  /** Default: no tracing. */
  tracing?: Tracing;
}

export function createSummarizingDeps(env: NodeJS.ProcessEnv = process.env, options: SummarizingDepsOptions = {}) {
  const deps = createDeps({
    env,
    ...(options.log ? { log: options.log } : {}),
    tracing: options.tracing,
    summarizerFactory: async () => {
      // The keys land in `env`, the environment the summarizer is then built from.
      await loadLlmSecrets(env, {
        ...(options.ssmClient ? { client: options.ssmClient } : {}),
        warn: (message, fields) => deps.log.warn(message, fields),
      });
      return createSummarizerFromEnv(env);
    },
  });
  // The functions that queue folds reach the worker by an asynchronous invoke; both of them (the
  // summarizing routes and the worker) store, read or delete blobs.
  return withWorkerInvoker(withBlobStore(deps, env, { tracing: options.tracing }), env, options.tracing);
}
