/**
 * A fold's summary in calls of at most the summarizer's input cap (docs/compaction.md,
 * "Summarizing"): one call, chained chunks, or chunks summarized in parallel and merged. No quality
 * gate here: summarize.ts checks what comes back.
 */
import type { SummaryLimit } from "../../domain/fold/refusal.js";
import type { Message } from "../../domain/model.js";
import { replayed } from "../../domain/replay.js";
import { carriedUnits } from "../../domain/salient-units.js";
import { chunkBySourceChars } from "../../domain/selector.js";
import { partsPerCall, plannedCalls, summaryStrategy } from "../../domain/summary-plan.js";
import type { Tunables } from "../../domain/tunables.js";
import { summarizerError, type ProviderFoldContext, type SummarizeInput, type SummarizeOutcome, type Summarizer, type SummarizerUsage, type SummarySourceMessage } from "../../ports/summarizer.js";
import { isImportant } from "./loss-fields.js";
import { remember, type CheckedSummary } from "./summary-fields.js";

/** What a fold asks of its summary: the messages, the caller's instructions, a range's topic. */
export interface SummaryRequest {
  fold: Message[];
  instructions?: string | undefined;
  topicLabel?: string | undefined;
  /** A provider fold's context: sent only when one call covers the whole fold. */
  providerFold?: ProviderFoldContext | undefined;
}

export type ChunkedSummary =
  | (CheckedSummary & { usage?: SummarizerUsage })
  | {
      ok: false;
      /** For the log: in words, possibly the provider's. */
      error: string;
      /** For tenants (`metadata.error`, `reason`): a summarizer failure code or `quality_gate: <check>`. */
      code: string;
      calls: number;
      usage?: SummarizerUsage;
      gate?: { check: string; detail?: string; attempts: number };
      /** A limit of the plan stopped it, not the summarizer (`code` names it too, for tenants). */
      limit?: SummaryLimit;
    };

export function toSource(m: Message): SummarySourceMessage {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    createdAt: m.createdAt,
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(isImportant(m) ? { important: true } : {}),
    ...(m.native ? { native: m.native } : {}),
  };
}

export const addUsage = (a: SummarizerUsage | undefined, b: SummarizerUsage | undefined): SummarizerUsage | undefined =>
  b
    ? { inputTokens: (a?.inputTokens ?? 0) + (b.inputTokens ?? 0), outputTokens: (a?.outputTokens ?? 0) + (b.outputTokens ?? 0) }
    : a;

/** One summarizer call; a throw (which the port rules out) becomes a failure like any other. */
export async function callSummarizer(summarizer: Summarizer, input: SummarizeInput): Promise<SummarizeOutcome> {
  try {
    return await summarizer.summarize(input);
  } catch (e) {
    // The port promises not to throw; an adapter bug must still not leave state behind.
    return { ok: false as const, failure: summarizerError("summarizer_error", e instanceof Error ? e.message : String(e)) };
  }
}

/**
 * The failure of a summarizer outcome as a {@link ChunkedSummary}: the adapter's code for tenants
 * (`summarizer_error` when it names none), its words only for the log (docs/summarizers.md,
 * "Failures").
 */
export const failed = (outcome: Extract<SummarizeOutcome, { ok: false }>, calls: number, usage: SummarizerUsage | undefined): Extract<ChunkedSummary, { ok: false }> => ({
  ok: false,
  error: outcome.failure.message,
  code: outcome.failure.kind,
  calls,
  ...(usage ? { usage } : {}),
});

/** What the merge call is told about its input (docs/summarizers.md, "Summarizing"). */
export const MERGE_INSTRUCTIONS =
  "The messages to fold are summaries of consecutive parts of the conversation, oldest first. Merge them with the prior summary into one summary.";

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

export type ChunkRun =
  | { ok: true; result: Extract<ChunkedSummary, { ok: true }>; lastInput: SummarizeInput; earlierCut: boolean }
  | Extract<ChunkedSummary, { ok: false }>;

/** A provider fold's block and note from one summarizer outcome. */
export const nativeOf = (o: SummarizeOutcome): Pick<CheckedSummary, "native" | "nativeNote"> =>
  o.ok ? { ...(o.native ? { native: o.native } : {}), ...(o.nativeNote ? { nativeNote: o.nativeNote } : {}) } : {};

/** The `truncated` field of a summary: present only when a call's answer was cut to the budget. */
export const cutFlag = (cut: boolean) => (cut ? { truncated: true as const } : {});

/** The refusal of a fold whose summary would take more than `maxSummarizerCalls` calls. */
const overCallCap = (needed: number, cap: number) =>
  `summarizer_call_cap: the fold needs ${needed} summarizer calls, at most ${cap} are allowed per fold (maxSummarizerCalls)`;

/**
 * Folds the selection into one summary. One chunk: one call with the prior summary. More chunks:
 * with `summarizerConcurrency` 1 they are chained (call k+1 gets call k's output); above 1 they are
 * summarized in parallel (at most that many at once, without the prior summary) and one more call
 * merges the partial summaries with the prior one, so the wall time is about two calls, not n. A
 * call cap too small for one merge call to hold two partial summaries chains them instead
 * (`summaryStrategy`). A fold whose plan needs more than `maxSummarizerCalls` fails before any
 * call: the callers cut their folds to the cap first (`foldWithinCallCap`).
 */
export async function summarizeChunks(
  summarizer: Summarizer,
  cap: number,
  tunables: Tunables,
  plan: SummaryRequest,
  priorSummary: string | null,
  mustKeep: string[],
): Promise<ChunkRun> {
  // A cleared result is summarized as its placeholder: the model had stopped seeing its content,
  // and the placeholder keeps the message id through which the full text can still be fetched.
  const chunks = chunkBySourceChars(plan.fold.map(replayed), cap);
  const perCall = partsPerCall(cap, tunables.summaryMaxTokens);
  const strategy = summaryStrategy(chunks.length, tunables.summarizerConcurrency, perCall);
  const needed = plannedCalls(chunks.length, strategy, perCall);
  if (needed > tunables.maxSummarizerCalls) {
    const error = overCallCap(needed, tunables.maxSummarizerCalls);
    return { ok: false, error, code: error, calls: 0, limit: "call_cap" };
  }
  if (strategy === "parallel") {
    return summarizeInParallel(summarizer, tunables, plan, priorSummary, mustKeep, cap, chunks.map((c) => c.source.map(toSource)));
  }
  let running = priorSummary;
  let calls = 0;
  let usage: SummarizerUsage | undefined;
  let citations: string[][] | undefined;
  const carried = new Map<string, string[]>();
  let lastInput: SummarizeInput | undefined;
  // Whether a call before the last one was cut (a retry of the last call cannot undo that), and the last.
  let earlierCut = false;
  let lastCut = false;
  let block: Pick<CheckedSummary, "native" | "nativeNote"> = {};
  // A provider's block stands for what one call sent: a fold in several chunks keeps the readable summary alone.
  const whole = plan.providerFold && chunks.length === 1 ? { providerFold: plan.providerFold } : {};
  if (plan.providerFold && chunks.length > 1) block = { nativeNote: `chunked: the fold took ${chunks.length} calls` };
  for (const chunk of chunks) {
    calls++;
    if (running !== null && citations) remember(carried, running, citations);
    lastInput = {
      priorSummary: running,
      messages: chunk.source.map(toSource),
      ...(plan.instructions ? { instructions: plan.instructions } : {}),
      ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
      ...(mustKeep.length > 0 ? { mustKeep } : {}),
      maxSummaryTokens: tunables.summaryMaxTokens,
      ...whole,
    };
    const outcome = await callSummarizer(summarizer, lastInput);
    usage = addUsage(usage, outcome.usage);
    if (!outcome.ok) return failed(outcome, calls, usage);
    running = outcome.summary;
    citations = outcome.citations;
    earlierCut ||= lastCut;
    lastCut = outcome.truncated === true;
    if (chunks.length === 1) block = nativeOf(outcome);
  }
  if (running === null || running.trim() === "" || !lastInput) {
    // Not retried: the summarizer answered nothing, and a reworded request does not change that.
    return { ...EMPTY_SUMMARY, calls, ...(usage ? { usage } : {}) };
  }
  return {
    ok: true,
    result: { ok: true, text: running, calls, ...(usage ? { usage } : {}), ...(citations ? { citations } : {}), carried, ...cutFlag(earlierCut || lastCut), ...block },
    lastInput,
    earlierCut,
  };
}

/**
 * The parallel path of {@link summarizeChunks}: every chunk without the prior summary, then the
 * partial summaries (as SYSTEM messages, oldest first) merged with the prior summary in one call;
 * each part's call is given the units it must keep that its messages carry;
 * another parallel round only while the partial summaries exceed one call's cap. A round that
 * would not take fewer calls than the one before (partial summaries too large for the cap) stops
 * the fold, and so does a round past `maxSummarizerCalls`: a FAILED row with a reason, not rounds
 * without end. Lines the merge copies keep the citations of the chunk output they came from.
 */
async function summarizeInParallel(
  summarizer: Summarizer,
  tunables: Tunables,
  plan: Omit<SummaryRequest, "fold">,
  priorSummary: string | null,
  mustKeep: string[],
  cap: number,
  firstRound: SummarySourceMessage[][],
): Promise<ChunkRun> {
  let calls = 0;
  let usage: SummarizerUsage | undefined;
  const carried = new Map<string, string[]>();
  const extra = {
    ...(plan.instructions ? { instructions: plan.instructions } : {}),
    ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
    maxSummaryTokens: tunables.summaryMaxTokens,
  };
  let inputs = firstRound;
  let parts: SummarySourceMessage[] = [];
  // A partial summary cut to the budget lost its tail before the merge saw it.
  let earlierCut = false;
  // Our own words, no provider's: the whole text is the code tenants see (`metadata.error`).
  const stop = (error: string, limit: SummaryLimit) => ({ ok: false as const, error, code: error, calls, ...(usage ? { usage } : {}), limit });
  for (let round = 1; ; round++) {
    // This round and the merge call must still fit the cap.
    if (calls + inputs.length + 1 > tunables.maxSummarizerCalls) return stop(overCallCap(calls + inputs.length + 1, tunables.maxSummarizerCalls), "call_cap");
    const outcomes = await mapBounded(inputs, tunables.summarizerConcurrency, (messages) => {
      calls++;
      // What the part's summary must keep so that the merge still has it to keep.
      const keep = carriedUnits(messages.map((m) => m.content).join("\n"), mustKeep);
      return callSummarizer(summarizer, { priorSummary: null, messages, ...extra, ...(keep.length > 0 ? { mustKeep: keep } : {}) });
    });
    for (const o of outcomes) usage = addUsage(usage, o.usage);
    const failure = outcomes.find((o) => !o.ok);
    if (failure && !failure.ok) return failed(failure, calls, usage);
    earlierCut ||= outcomes.some((o) => o.ok && o.truncated === true);
    parts = outcomes.map((o, k) => {
      const text = o.ok ? o.summary : "";
      if (o.ok && o.citations) remember(carried, text, o.citations);
      const last = inputs[k]![inputs[k]!.length - 1]!;
      return { id: `part-${round}-${k + 1}`, role: "SYSTEM" as const, content: `Summary of part ${k + 1} of ${outcomes.length}:\n${text}`, createdAt: last.createdAt };
    });
    const regrouped = chunkBySourceChars(parts, cap);
    if (regrouped.length === 1) break;
    if (regrouped.length >= inputs.length) {
      return stop(
        `summarizer_merge_stalled: merge round ${round + 1} would take ${regrouped.length} calls after ${inputs.length} in round ${round}: the partial summaries do not fit fewer calls of ${cap} chars`,
        "merge_stalled",
      );
    }
    inputs = regrouped.map((c) => c.source);
  }
  const lastInput: SummarizeInput = {
    priorSummary,
    messages: parts,
    instructions: plan.instructions ? `${MERGE_INSTRUCTIONS}\n${plan.instructions}` : MERGE_INSTRUCTIONS,
    ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
    ...(mustKeep.length > 0 ? { mustKeep } : {}),
    maxSummaryTokens: tunables.summaryMaxTokens,
  };
  calls++;
  const merged = await callSummarizer(summarizer, lastInput);
  usage = addUsage(usage, merged.usage);
  if (!merged.ok) return failed(merged, calls, usage);
  if (merged.summary.trim() === "") {
    return { ...EMPTY_SUMMARY, calls, ...(usage ? { usage } : {}) };
  }
  return {
    ok: true,
    result: {
      ok: true,
      text: merged.summary,
      calls,
      ...(usage ? { usage } : {}),
      ...(merged.citations ? { citations: merged.citations } : {}),
      carried,
      ...cutFlag(earlierCut || merged.truncated === true),
      // No call saw the whole range: a provider fold keeps its readable summary alone.
      ...(plan.providerFold ? { nativeNote: `chunked: the fold took ${calls} calls` } : {}),
    },
    lastInput,
    earlierCut,
  };
}

/** A blank summary: not retried, since a reworded request does not make a provider answer. */
export const EMPTY_SUMMARY = {
  ok: false as const,
  error: "quality_gate: empty (empty summary)",
  code: "quality_gate: empty (empty summary)",
  gate: { check: "empty", attempts: 1 },
};
