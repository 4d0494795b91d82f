/**
 * The chaos harness's summarizer: deterministic text, and per operation a planned list of
 * outcomes (error, an adapter that throws, a timeout that outlives the lease, a slow success, an
 * empty answer). The summary names the folded messages and keeps a bounded tail of its prior, so
 * every summary is distinct and a long run never grows one past a few hundred characters.
 */
import { truncateToTokenBudget } from "../../core/domain/budget.js";
import { summarizerError, type SummarizeInput, type SummarizeOutcome, type Summarizer } from "../../core/ports/summarizer.js";
import type { SummarizerOutcome, SummarizerStep } from "./plan.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let counter = 0;

export interface ChaosSummarizerOptions {
  steps: readonly SummarizerStep[];
  /** Timeouts and slow answers take longer than a lease, so someone else may take over. */
  leaseMs: number;
  /** Called for every outcome that is not `ok` (the harness counts faults). */
  onFault?: (outcome: SummarizerOutcome) => void;
  /** The `nth` call (1 = the first) answers only once `wait()` resolves: a stalled answer. */
  hold?: { nth: number; wait: () => Promise<void> };
  contextWindow?: number;
}

export function createChaosSummarizer(options: ChaosSummarizerOptions): Summarizer & { calls: number } {
  const summarizer = {
    provider: "chaos",
    model: "chaos-fake",
    contextWindow: options.contextWindow ?? 200_000,
    maxOutputTokens: summarizerBudget,
    calls: 0,
    async summarize(input: SummarizeInput): Promise<SummarizeOutcome> {
      const step = options.steps[summarizer.calls++] ?? { outcome: "ok" as const, delayMs: 0 };
      if (options.hold?.nth === summarizer.calls) await options.hold.wait();
      if (step.outcome !== "ok") options.onFault?.(step.outcome);
      switch (step.outcome) {
        case "error":
          await sleep(step.delayMs);
          return { ok: false, failure: summarizerError("summarizer_error", "provider overloaded (injected)") };
        case "throw":
          await sleep(step.delayMs);
          throw new Error("adapter bug (injected)");
        case "timeout":
          await sleep(Math.round(options.leaseMs * 1.3));
          return { ok: false, failure: summarizerError("summarizer_error", `timeout after ${Math.round(options.leaseMs * 1.3)} ms (injected)`) };
        case "empty":
          await sleep(step.delayMs);
          return { ok: true, summary: "   " };
        case "slow":
          await sleep(Math.round(options.leaseMs * 1.3));
          return { ok: true, summary: render(input) };
        case "ok":
          await sleep(step.delayMs);
          return { ok: true, summary: render(input), usage: { inputTokens: 10 * input.messages.length, outputTokens: 20 } };
      }
    },
  };
  return summarizer;
}

/** Like a real adapter, the answer keeps to the call's budget (`maxSummaryTokens`); the prior's tail goes first. */
function render(input: SummarizeInput): string {
  const first = input.messages[0]?.id ?? "-";
  const last = input.messages[input.messages.length - 1]?.id ?? "-";
  const prior = input.priorSummary ? `\nbefore: ${input.priorSummary.slice(0, 160)}` : "";
  const topic = input.topicLabel ? ` topic=${input.topicLabel}` : "";
  const keep = input.mustKeep?.length ? ` keeps ${input.mustKeep.join("; ")}` : "";
  const text = `S${++counter}: folded ${input.messages.length} messages ${first}..${last}${topic}${keep}${prior}`;
  return truncateToTokenBudget(text, input.maxSummaryTokens ?? summarizerBudget);
}
const summarizerBudget = 400;
