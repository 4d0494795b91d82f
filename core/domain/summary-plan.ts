/**
 * How many summarizer calls a fold takes, and how much of a fold fits the cap on calls per fold
 * (docs/summarizers.md, "Summarizing"): chunks of the summarizer's input cap, summarized one after
 * the other or in parallel and then merged. Pure: the service summarizes what this plans.
 */
import { charsForTokens } from "./budget.js";
import type { Message } from "./model.js";
import { replayed } from "./replay.js";
import { chunkBySourceChars, SUMMARY_SOURCE_FRAMING_CHARS } from "./selector.js";
import { SAFE_CHARS_PER_TOKEN, SUMMARIZER_PROMPT_RESERVE_TOKENS } from "./summarizer-fit.js";
import { uncuttableRuns, type FoldUnit } from "./tool-groups.js";
import type { Tunables } from "./tunables.js";

/** The most a partial summary's heading in a merge call takes ("Summary of part 12 of 34:\n"). */
export const PART_HEADING_CHARS = 40;

/** Chars one partial summary of `summaryMaxTokens` takes in a merge call, framing included. */
export const partChars = (summaryMaxTokens: number) => charsForTokens(summaryMaxTokens) + PART_HEADING_CHARS + SUMMARY_SOURCE_FRAMING_CHARS;

/**
 * How many partial summaries of `summaryMaxTokens` one call of `capChars` holds. Below 2 a merge
 * round could not shrink its input, so such a fold is chained instead of merged.
 *
 * @example partsPerCall(60_000, 400) // 35
 */
export function partsPerCall(capChars: number, summaryMaxTokens: number): number {
  return Math.floor(capChars / partChars(summaryMaxTokens));
}

/**
 * `single`: one call. `chained`: call k+1 gets call k's output as its prior summary (n calls).
 * `parallel`: every chunk at once, then merge rounds of `partsPerCall` parts each until one call
 * holds them all, then the merge with the prior summary.
 */
export type SummaryStrategy = "single" | "chained" | "parallel";

export function summaryStrategy(chunks: number, concurrency: number, perCall: number): SummaryStrategy {
  if (chunks <= 1) return "single";
  return concurrency > 1 && perCall >= 2 ? "parallel" : "chained";
}

/**
 * Calls a fold of `chunks` chunks takes: one per chunk, and when parallel, one per group of
 * `perCall` parts in each merge round and the final merge (each round divides the parts by
 * `perCall`, so there are about log(n) rounds).
 *
 * @example plannedCalls(54, "parallel", 35) // 54 + 2 + 1 = 57
 */
export function plannedCalls(chunks: number, strategy: SummaryStrategy, perCall: number): number {
  if (strategy !== "parallel") return chunks;
  let calls = chunks;
  for (let parts = chunks; parts > perCall; ) {
    parts = Math.ceil(parts / perCall);
    calls += parts;
  }
  return calls + 1;
}

export interface SizedFold<M> {
  /** The oldest part of the fold that fits the cap: the whole fold when it fits, empty when nothing does. */
  fold: M[];
  /** True when `fold` is shorter than the fold asked for. */
  cut: boolean;
  chunks: number;
  strategy: SummaryStrategy;
  /** Calls the summary of `fold` takes (the quality gate's retry not counted). */
  calls: number;
  /** What the summarizer gets of `fold`, in chars (framing and truncation included). */
  sourceChars: number;
}

type PlanTunables = Pick<Tunables, "summarizerConcurrency" | "maxSummarizerCalls" | "summaryMaxTokens">;

function sized<M extends Message>(fold: M[], cut: boolean, capChars: number, t: PlanTunables): SizedFold<M> {
  const chunks = fold.length > 0 ? chunkBySourceChars(fold.map(replayed), capChars) : [];
  const perCall = partsPerCall(capChars, t.summaryMaxTokens);
  const strategy = summaryStrategy(chunks.length, t.summarizerConcurrency, perCall);
  return {
    fold,
    cut,
    chunks: chunks.length,
    strategy,
    calls: plannedCalls(chunks.length, strategy, perCall),
    sourceChars: chunks.reduce((n, c) => n + c.chars, 0),
  };
}

/**
 * The oldest part of `fold` whose summary takes at most `maxSummarizerCalls` calls, one of them
 * kept back for the quality gate's retry (so at least one for the summary itself). It is cut only
 * between the runs a fold must take whole (a tool group with what sits between its members; a
 * whole turn with `unit: "turn"`), so the part is itself a valid fold; empty when not even the first run fits. The rest stays active
 * and is folded by a later compaction.
 *
 * @example foldWithinCallCap(selection.fold, inputCap, tunables).fold // what this fold summarizes
 */
export function foldWithinCallCap<M extends Message>(fold: readonly M[], capChars: number, t: PlanTunables, unit: FoldUnit = "tool_group"): SizedFold<M> {
  const whole = sized([...fold], false, capChars, t);
  const allowed = Math.max(1, t.maxSummarizerCalls - 1);
  if (whole.calls <= allowed) return whole;

  const chunks = chunkBySourceChars(fold.map(replayed), capChars);
  const perCall = partsPerCall(capChars, t.summaryMaxTokens);
  let k = chunks.length - 1;
  while (k > 1 && plannedCalls(k, summaryStrategy(k, t.summarizerConcurrency, perCall), perCall) > allowed) k--;
  const messages = chunks.slice(0, k).reduce((n, c) => n + c.messages.length, 0);
  // Back to the last boundary between whole runs within those chunks (chunks cut between runs,
  // except a run too large for one call, which is spread over several).
  let end = 0;
  for (const run of uncuttableRuns(fold, unit)) {
    if (end + run.length > messages) break;
    end += run.length;
  }
  return sized(fold.slice(0, end), true, capChars, t);
}

/**
 * An upper estimate of the tokens a fold's summary costs, for the tenant's daily budget
 * (docs/reliability.md, "Limits, budgets and rates"): its input at 3 chars a token, and per call
 * (the quality gate's retry included) the prompt reserve, a prior summary of twice the budget and
 * the answer, as the input cap reserves them (summarizer-fit.ts). What the calls report replaces
 * it once the fold has run.
 *
 * @example estimateFoldTokens({ sourceChars: 30_000, calls: 1 }, 400) // 10000 + 2 x 2700 = 15400
 */
export function estimateFoldTokens(fold: Pick<SizedFold<unknown>, "sourceChars" | "calls">, summaryMaxTokens: number): number {
  const perCall = SUMMARIZER_PROMPT_RESERVE_TOKENS + 3 * summaryMaxTokens;
  return Math.ceil(fold.sourceChars / SAFE_CHARS_PER_TOKEN) + (fold.calls + 1) * perCall;
}
