/**
 * The factory of each provider's summarizer, keyed like the descriptors
 * (provider-descriptors.ts): a provider missing here is a compile error.
 */
import type { Summarizer } from "../../ports/summarizer.js";
import { createAnthropicCompactionSummarizer } from "./anthropic-compaction.js";
import { createAnthropicSummarizer } from "./anthropic-summarizer.js";
import { createOfflineSummarizer, type OfflineSummarizerOptions } from "./offline-summarizer.js";
import { createOpenAICompactionSummarizer } from "./openai-compaction.js";
import { createOpenAISummarizer } from "./openai-summarizer.js";
import type { ProviderName } from "./provider-descriptors.js";
import type { RemoteSummarizerOptions } from "./remote-summarizer.js";

/** What a factory gets: the remote options; the offline summarizer reads only its budget and window. */
export type ProviderFactory = (options: RemoteSummarizerOptions & OfflineSummarizerOptions) => Summarizer;

export const SUMMARIZER_FACTORIES = {
  offline: ({ maxOutputTokens, contextWindow }) => createOfflineSummarizer({ maxOutputTokens, contextWindow }),
  openai: createOpenAISummarizer,
  anthropic: createAnthropicSummarizer,
  // Provider folds (docs/summarizers.md, "Provider folds"): the provider writes the block.
  "anthropic-compaction": createAnthropicCompactionSummarizer,
  "openai-compaction": createOpenAICompactionSummarizer,
} satisfies Record<ProviderName, ProviderFactory>;
