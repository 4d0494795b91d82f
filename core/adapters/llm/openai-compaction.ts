/**
 * The `openai-compaction` provider fold (docs/summarizers.md, "Provider folds"): OpenAI's
 * `/responses/compact` compacts the archived range (after the previous window) into a window of
 * the user messages and one encrypted `compaction` item, kept verbatim as the memory's native
 * content. That item has no readable text, so the readable summary is written by the service's
 * own OpenAI summarizer from the same range, at the same time: the fold has both, or the readable
 * one alone and says why (`nativeNote`). Which models compact comes from the model table.
 */
import OpenAI from "openai";
import { supportsResponsesCompaction } from "../../domain/model-windows.js";
import { responsesFoldItems } from "../../domain/native/provider-fold.js";
import * as z from "../../domain/zod.js";
import type { SummarizeInput, SummarizeOutcome, Summarizer } from "../../ports/summarizer.js";
import { createOpenAISummarizer, type OpenAISummarizerOptions } from "./openai-summarizer.js";
import { foldInstructions, providerFoldSummarizer, sumUsage } from "./provider-fold-common.js";
import { PROVIDERS } from "./provider-descriptors.js";
import { remoteConfig, sdkClientOptions } from "./remote-summarizer.js";
import { callWithRetries, classifySdkError } from "./retry.js";

const CompactedAnswer = z.object({
  object: z.optional(z.string()),
  output: z.array(z.looseObject({ type: z.optional(z.string()) })),
  usage: z.nullish(z.looseObject({ input_tokens: z.nullish(z.number()), output_tokens: z.nullish(z.number()) })),
});

/** A provider fold over OpenAI's `/responses/compact`, with the readable summary beside it. */
export function createOpenAICompactionSummarizer(options: OpenAISummarizerOptions = {}): Summarizer {
  const config = remoteConfig(options, PROVIDERS["openai-compaction"].defaultModel);
  const { model, policy } = config;
  const client = options.client ?? new OpenAI(sdkClientOptions(options, policy));
  const readable = createOpenAISummarizer({ ...options, client, model });
  const retryDeps = { ...(config.clock ? { clock: config.clock } : {}), ...(config.random ? { random: config.random } : {}) };
  const compacts = supportsResponsesCompaction(model);

  /** The window, or why there is none (a failure code for `nativeNote`). */
  async function compact(input: SummarizeInput): Promise<{ ok: true; window: unknown[]; usage: ReturnType<typeof sumUsage> } | { ok: false; note: string }> {
    if (!compacts) return { ok: false, note: `model_unsupported: ${model} is not among the models /responses/compact takes` };
    const instructions = foldInstructions(input);
    const body = { model, input: responsesFoldItems(input), ...(instructions ? { instructions } : {}) } as unknown as OpenAI.Responses.ResponseCompactParams;
    const result = await callWithRetries(policy, ({ signal }) => client.responses.compact(body, { signal, maxRetries: 0 }), (e) => classifySdkError("openai", e), retryDeps);
    if (!result.ok) return { ok: false, note: `${result.failure.kind}: ${result.failure.message.slice(0, 200)}` };
    const parsed = CompactedAnswer.safeParse(result.value);
    if (!parsed.success || !parsed.data.output.some((i) => i.type === "compaction")) return { ok: false, note: "answer_unusable: the compacted window holds no compaction item" };
    // The window exactly as returned, in order.
    return { ok: true, window: (result.value as { output: unknown[] }).output, usage: sumUsage([parsed.data.usage]) };
  }

  async function fold(input: SummarizeInput): Promise<SummarizeOutcome> {
    const [summary, window] = await Promise.all([readable.summarize(input), compact(input)]);
    const windowUsage = window.ok ? window.usage : undefined;
    const usage = sumUsage([
      { input_tokens: summary.usage?.inputTokens ?? null, output_tokens: summary.usage?.outputTokens ?? null },
      windowUsage ? { input_tokens: windowUsage.inputTokens ?? null, output_tokens: windowUsage.outputTokens ?? null } : null,
    ]);
    if (!summary.ok) return { ...summary, usage };
    if (!window.ok) return { ...summary, usage, nativeNote: window.note };
    return { ...summary, usage, native: { format: "openai-responses", content: window.window } };
  }

  return providerFoldSummarizer({ provider: "openai-compaction", foldFormat: "openai-responses", config, fold, readable });
}
