/** What both provider folds share (docs/summarizers.md, "Provider folds"): their instructions and usage. */
import type { SummarizeInput, SummarizerUsage } from "../../ports/summarizer.js";

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
