/**
 * The chaos harness's summarizer: deterministic text, and per operation a planned list of
 * outcomes (error, an adapter that throws, a timeout that outlives the lease, a slow success, an
 * empty answer). The summary names the folded messages and keeps a bounded tail of its prior, so
 * every summary is distinct and a long run never grows one past a few hundred characters. With
 * `blocks` it is a provider fold (docs/summarizers.md, "Provider folds"): each success also
 * answers an Anthropic `compaction` block, every third one past the inline size (a blob).
 */
import { truncateToTokenBudget } from "../../core/domain/budget.js";
import { summarizerError, type SummarizeInput, type SummarizeOutcome, type Summarizer } from "../../core/ports/summarizer.js";
import type { SummarizerOutcome, SummarizerStep } from "./plan.js";
import { NATIVE_INLINE_MAX_BYTES, nativeHash } from "../../core/domain/native/blob-parts.js";
import type { NativeContent } from "../../core/domain/native/formats.js";

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
  /**
   * A provider fold: the hash of each block answered is recorded by its tag (the block's
   * signature), so the end-of-run checks know what each memory must keep; `prefix` makes tags unique.
   */
  blocks?: { prefix: string; sent: Map<string, string> };
}

/** The tag of a chaos block: its signature. */
export const blockTag = (native: NativeContent | undefined): string | undefined =>
  (native?.content[0] as { signature?: unknown } | undefined)?.signature as string | undefined;

/** The `compaction` block of the n-th provider fold (1-based): every third one is past the inline size. */
function compactionBlock(blocks: NonNullable<ChaosSummarizerOptions["blocks"]>, summary: string): NativeContent {
  const n = blocks.sent.size + 1;
  const pad = n % 3 === 0 ? `\n${"kept reasoning ✓ ".repeat(Math.ceil((NATIVE_INLINE_MAX_BYTES + 4096) / 18))}` : "";
  const native: NativeContent = { format: "anthropic", content: [{ type: "compaction", content: `${summary}${pad}`, signature: `${blocks.prefix}-${n}` }] };
  blocks.sent.set(`${blocks.prefix}-${n}`, nativeHash(native));
  return native;
}

export function createChaosSummarizer(options: ChaosSummarizerOptions): Summarizer & { calls: number } {
  const blocks = options.blocks;
  /** A success: with `blocks`, the summary and its block. */
  const answer = (input: SummarizeInput) => {
    const summary = render(input);
    return blocks ? { summary, native: compactionBlock(blocks, summary) } : { summary };
  };
  const summarizer = {
    provider: blocks ? "anthropic-compaction" : "chaos",
    ...(blocks ? { foldFormat: "anthropic" as const } : {}),
    // A provider fold's memory names a Claude model, so a turn of that family replays its block.
    model: blocks ? "claude-chaos-fake" : "chaos-fake",
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
          return { ok: true, ...answer(input) };
        case "ok":
          await sleep(step.delayMs);
          return { ok: true, ...answer(input), usage: { inputTokens: 10 * input.messages.length, outputTokens: 20 } };
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
