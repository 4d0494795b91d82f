/** The composition root of the functions that summarize: secrets first, then the summarizer. */
import { createSummarizerFromEnv } from "../core/adapters/llm/create-summarizer.js";
import { loadLlmSecrets } from "./load-secrets.js";
import { createDeps } from "./root.js";

export function createSummarizingDeps() {
  return createDeps({
    summarizerFactory: async () => {
      await loadLlmSecrets();
      return createSummarizerFromEnv(process.env);
    },
  });
}
