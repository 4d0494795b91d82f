/**
 * The `anthropic-compaction` provider fold (docs/summarizers.md, "Provider folds"): Anthropic's
 * on-demand compaction writes the fold. The service chooses the cut (the keep-recent-turns form)
 * and sends the folded turns as stored, after the previous block, with the conversation's own
 * `system` and `tools`; the answer's `compaction` block is kept verbatim as the memory's native
 * content and its text is the readable summary. Whether the model supports it is read from the
 * Models API (`capabilities.compaction.summarize`), once per summarizer.
 */
import Anthropic from "@anthropic-ai/sdk";
import { anthropicFoldMessages } from "../../domain/native/provider-fold.js";
import * as z from "../../domain/zod.js";
import { summarizerError, type SummarizeInput, type SummarizeOutcome, type Summarizer, type SummarizerError } from "../../ports/summarizer.js";
import { createAnthropicSummarizer } from "./anthropic-summarizer.js";
import { foldInstructions, providerFoldSummarizer, sumUsage } from "./provider-fold-common.js";
import { PROVIDERS } from "./provider-descriptors.js";
import { remoteConfig, sdkClientOptions, type RemoteSummarizerOptions } from "./remote-summarizer.js";
import { callWithRetries, classifySdkError } from "./retry.js";

/** The beta of on-demand compaction ("Compaction that keeps recent turns"). */
export const ANTHROPIC_COMPACTION_BETA = "compact-2026-09-04";

const Usage = z.object({ input_tokens: z.nullish(z.number()), output_tokens: z.nullish(z.number()) });
const CompactionAnswer = z.object({
  content: z.array(z.looseObject({ type: z.string(), content: z.nullish(z.string()) })),
  stop_reason: z.nullish(z.string()),
  usage: z.nullish(z.looseObject({ ...Usage.shape, iterations: z.nullish(z.array(z.looseObject({ type: z.string(), ...Usage.shape }))) })),
});
const ModelInfo = z.looseObject({
  capabilities: z.nullish(z.looseObject({ compaction: z.nullish(z.looseObject({ summarize: z.nullish(z.object({ supported: z.boolean() })) })) })),
});

/**
 * A provider fold over Anthropic's on-demand compaction. A model the Models API does not report
 * as supporting it is summarized by the plain Anthropic summarizer instead, readable alone, and
 * the outcome says so (`nativeNote`).
 */
export function createAnthropicCompactionSummarizer(options: RemoteSummarizerOptions<Anthropic> = {}): Summarizer {
  const config = remoteConfig(options, PROVIDERS["anthropic-compaction"].defaultModel);
  const { model, policy } = config;
  const client = options.client ?? new Anthropic(sdkClientOptions(options, policy));
  const plain = createAnthropicSummarizer({ ...options, client, model });
  const retryDeps = { ...(config.clock ? { clock: config.clock } : {}), ...(config.random ? { random: config.random } : {}) };
  let support: Promise<boolean | SummarizerError> | undefined;

  /** The Models API's word on this model, asked once (a failed ask is asked again next fold). */
  function supported(): Promise<boolean | SummarizerError> {
    support ??= callWithRetries(policy, ({ signal }) => client.beta.models.retrieve(model, {}, { signal, maxRetries: 0 }), (e) => classifySdkError("anthropic", e), retryDeps).then(
      (r) => {
        if (!r.ok) {
          support = undefined;
          return r.failure;
        }
        const parsed = ModelInfo.safeParse(r.value);
        return parsed.success && parsed.data.capabilities?.compaction?.summarize?.supported === true;
      },
    );
    return support;
  }

  async function fold(input: SummarizeInput): Promise<SummarizeOutcome> {
    if (input.messages.length === 0 && !input.priorSummary?.trim()) {
      return { ok: false, failure: summarizerError("nothing_to_summarize", "nothing to summarize: no messages and no prior summary") };
    }
    const supports = await supported();
    if (typeof supports !== "boolean") return { ok: false, failure: supports };
    if (!supports) {
      const readable = await plain.summarize(input);
      return readable.ok ? { ...readable, nativeNote: `model_unsupported: the Models API reports no compaction for ${model}` } : readable;
    }
    const out = await compact(input);
    if (out.ok || out.failure.kind !== "provider_rejected" || !input.providerFold?.priorNative) return out;
    // A previous block the provider will not read (another account, an expired beta): the chain
    // starts again from the prior readable summary.
    const { priorNative: _refused, ...rest } = input.providerFold;
    return compact({ ...input, providerFold: rest });
  }

  async function compact(input: SummarizeInput): Promise<SummarizeOutcome> {
    const context = input.providerFold ?? {};
    const instructions = foldInstructions(input);
    const body = {
      model,
      max_tokens: input.maxSummaryTokens ?? config.maxOutputTokens,
      messages: anthropicFoldMessages(input),
      compaction: { type: "summarize" as const, ...(instructions ? { instructions } : {}) },
      betas: [ANTHROPIC_COMPACTION_BETA],
      ...(context.system !== undefined ? { system: context.system } : {}),
      ...(context.tools ? { tools: context.tools } : {}),
    } as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming;
    const result = await callWithRetries(policy, ({ signal }) => client.beta.messages.create(body, { signal, maxRetries: 0 }), (e) => classifySdkError("anthropic", e), retryDeps);
    if (!result.ok) return { ok: false, failure: result.failure };
    const parsed = CompactionAnswer.safeParse(result.value);
    if (!parsed.success) return { ok: false, failure: summarizerError("answer_unusable", "anthropic compaction answer has an unexpected shape") };
    const { content, stop_reason, usage: raw } = parsed.data;
    // The compaction entries of `iterations` are billed beside the top-level fields, which leave them out.
    const usage = sumUsage([raw, ...(raw?.iterations ?? []).filter((i) => i.type === "compaction")]);
    const block = content.find((b) => b.type === "compaction");
    if (!block || typeof block.content !== "string" || block.content.trim() === "") {
      return { ok: false, failure: summarizerError("answer_unusable", `anthropic compaction returned no summary (stop_reason=${stop_reason ?? "none"})`), usage };
    }
    // The block exactly as the API returned it, unknown fields included.
    const returned = (result.value as { content: unknown[] }).content[content.indexOf(block)];
    return { ok: true, summary: block.content, native: { format: "anthropic", content: [returned] }, usage };
  }

  return providerFoldSummarizer({ provider: "anthropic-compaction", foldFormat: "anthropic", config, fold, readable: plain });
}
