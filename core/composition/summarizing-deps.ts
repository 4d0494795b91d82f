/** The composition root of the functions that summarize: secrets first, then the summarizer. */
import { createSummarizerFromEnv } from "../adapters/llm/create-summarizer.js";
import { loadLlmSecrets } from "../adapters/secrets/llm-secrets.js";
import { createDeps } from "./create-deps.js";
import { withWorkerInvoker } from "./worker-events.js";

export function createSummarizingDeps(env: NodeJS.ProcessEnv = process.env) {
  const deps = createDeps({
    env,
    summarizerFactory: async () => {
      await loadLlmSecrets();
      return createSummarizerFromEnv(env);
    },
  });
  // The functions that queue folds reach the worker by an asynchronous invoke.
  return withWorkerInvoker(deps, env);
}
