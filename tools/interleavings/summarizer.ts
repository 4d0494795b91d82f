/**
 * The checker's summarizer: answers at once (no timer, so an actor runs straight to its next
 * DynamoDB call) with a deterministic summary that names what it folded and carries every unit
 * it must keep (the quality gate passes).
 */
import type { SummarizeInput, SummarizeOutcome, Summarizer } from "../../core/ports/summarizer.js";

export function createInstantSummarizer(): Summarizer {
  return {
    provider: "checker",
    model: "instant",
    contextWindow: 200_000,
    maxOutputTokens: 400,
    async summarize(input: SummarizeInput): Promise<SummarizeOutcome> {
      const first = input.messages[0]?.id ?? "-";
      const last = input.messages.at(-1)?.id ?? "-";
      const keep = input.mustKeep?.length ? ` keeps ${input.mustKeep.join("; ")}` : "";
      const topic = input.topicLabel ? ` on ${input.topicLabel}` : "";
      return { ok: true, summary: `Folded ${input.messages.length} messages ${first}..${last}${topic}.${keep}`, usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}
