/** What both provider folds share (docs/summarizers.md, "Provider folds"): their instructions and usage. */
import type { NativeFormat } from "../../domain/native/formats.js";
import { summarizerError, type SummarizeInput, type SummarizeOutcome, type Summarizer, type SummarizerUsage } from "../../ports/summarizer.js";

/**
 * The instructions a provider fold sends, or none (the provider's own prompt): the caller's
 * instructions and the units the summary must keep word for word. Sending any replaces the
 * provider's prompt, so they open with what the summary is for.
 */
export function foldInstructions(input: SummarizeInput): string | undefined {
  const parts = [
    input.instructions?.trim(),
    input.mustKeep?.length ? `Keep these exactly as written: ${input.mustKeep.join(", ")}` : undefined,
  ].filter((p): p is string => Boolean(p));
  if (parts.length === 0) return undefined;
  return ["Summarize the conversation so far so that it can continue from the summary.", ...parts].join("\n\n");
}

type RawUsage = { input_tokens?: number | null; output_tokens?: number | null } | null | undefined;

/** The provider's usage entries summed into the port's (absent fields count 0). */
export function sumUsage(entries: readonly RawUsage[]): SummarizerUsage {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const e of entries) {
    inputTokens += e?.input_tokens ?? 0;
    outputTokens += e?.output_tokens ?? 0;
  }
  return { inputTokens, outputTokens };
}

/**
 * The summarizer of a provider fold: `fold` writes each summary (never throwing past here: the
 * port promises no throw), `readable` answers plain completions over the same wire.
 */
export function providerFoldSummarizer(o: {
  provider: string;
  foldFormat: NativeFormat;
  config: { model: string; contextWindow: number; maxOutputTokens: number };
  fold: (input: SummarizeInput) => Promise<SummarizeOutcome>;
  readable: Summarizer;
}): Summarizer {
  return {
    provider: o.provider,
    foldFormat: o.foldFormat,
    model: o.config.model,
    contextWindow: o.config.contextWindow,
    maxOutputTokens: o.config.maxOutputTokens,
    async summarize(input) {
      try {
        return await o.fold(input);
      } catch (err) {
        return { ok: false, failure: summarizerError("summarizer_error", `${o.provider} failed: ${(err as Error)?.message ?? String(err)}`) };
      }
    },
    complete: (request) => o.readable.complete!(request),
  };
}
