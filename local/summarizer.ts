/** The local runner's summarizer: chosen from the environment once, loaded on first use. */
import type { Summarizer } from "../core/ports/summarizer.js";

export function summarizerFactoryFromEnv(env: NodeJS.ProcessEnv): () => Promise<Summarizer> {
  return async () => {
    const { createSummarizerFromEnv } = await import("../core/adapters/llm/create-summarizer.js");
    return createSummarizerFromEnv(env);
  };
}
