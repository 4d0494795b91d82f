/** A scriptable Summarizer that records its calls (tests and the chaos harness). */
import type { SummarizeInput, SummarizeOutcome, Summarizer } from "../../core/ports/summarizer.js";

export interface FakeSummarizer extends Summarizer {
  calls: SummarizeInput[];
  /** Next outcomes, consumed in order; when empty, a summary naming the folded ids. */
  script: Array<SummarizeOutcome | Error | ((input: SummarizeInput) => Promise<SummarizeOutcome>)>;
  /** Delay every call (ms), to widen race windows. */
  delayMs: number;
}

export function createFakeSummarizer(overrides: Partial<Pick<Summarizer, "contextWindow" | "maxOutputTokens">> = {}): FakeSummarizer {
  const fake: FakeSummarizer = {
    provider: "fake",
    model: "fake-model",
    contextWindow: overrides.contextWindow ?? 200_000,
    maxOutputTokens: overrides.maxOutputTokens ?? 400,
    calls: [],
    script: [],
    delayMs: 0,
    async summarize(input) {
      fake.calls.push(input);
      if (fake.delayMs) await new Promise((r) => setTimeout(r, fake.delayMs));
      const next = fake.script.shift();
      if (next instanceof Error) throw next;
      if (typeof next === "function") return next(input);
      if (next) return next;
      const prior = input.priorSummary ? `${input.priorSummary} | ` : "";
      // Like a real summarizer: within its budget (chars/4), and carrying what it must keep.
      const keep = input.mustKeep?.length ? ` | keeps ${input.mustKeep.join("; ")}` : "";
      let summary = `${prior}folded ${input.messages.map((m) => m.id).join(",")}${keep}`;
      if (summary.length > fake.maxOutputTokens * 4) {
        summary = `folded ${input.messages.length} messages ${input.messages[0]?.id}..${input.messages.at(-1)?.id}${keep}`;
      }
      return { ok: true, summary, usage: { inputTokens: 10, outputTokens: 5 } };
    },
  };
  return fake;
}
