/**
 * The one summarizing step of every fold that calls a model (docs/compaction.md, "The commit
 * protocol" and "Summarizing"): the summarizer and its input cap, the cut to `maxSummarizerCalls`,
 * the lease, the daily budget, the summary and its quality gate, the stored fields, the FAILED row
 * on failure. A committing fold and the worker's prepared fold differ only in their
 * {@link FoldWriter}: what the memory looks like and where it is written.
 */
import { isItemTooLarge, unlessTooLarge } from "../../domain/errors.js";
import { metricModeOf } from "../../domain/fold/lifecycle.js";
import { SUMMARY_TOO_LARGE, type FoldRefusal } from "../../domain/fold/refusal.js";
import type { SummaryFields, SummaryParts } from "../../domain/fold/rows.js";
import type { FoldTarget, Memory, Message } from "../../domain/model.js";
import { NATIVE_INLINE_MAX_BYTES } from "../../domain/native/blob-parts.js";
import { NATIVE_BLOCK_MAX_BYTES } from "../../domain/native/memory-block.js";
import { newestSummary } from "../../domain/replay.js";
import { estimateFoldTokens, foldWithinCallCap } from "../../domain/summary-plan.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { keepBlock } from "../native-content.js";
import { releaseLease, takeLease } from "./lease.js";
import { admitModelWork, recordModelUse } from "./model-budget.js";
import { metered } from "../model-usage.js";
import { policyOf } from "../../domain/mode-policy.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { summarizeChecked, summarizerFor, summarizeOffline } from "./summarize.js";
import type { ChunkedSummary, SummaryRequest } from "./summary-chunks.js";
import { foldNeeds, summaryFields } from "./summary-fields.js";
import { providerFoldAsk, providerFoldMetadata, providerFoldRange } from "./provider-fold.js";


/** What the fold asks of the pipeline. */
export interface FoldAsk extends SummaryRequest {
  /** What the fold is for: its metric dimension, and whether it falls back to offline. */
  mode: FoldTarget;
  /** The model window the fold makes room in, when known: the summary budget grows with it. */
  contextWindow?: number | undefined;
  /** The fold must be taken whole (a range): past `maxSummarizerCalls` it fails instead of folding its oldest part. */
  whole?: boolean;
  /** The lease owner token to use (a caller that may have to abandon the fold passes its own). */
  owner?: string | undefined;
  /** Own replay tokens the lease checks against a revert hold (automatic folds only). */
  holdCheckTokens?: number | undefined;
}

/** What a summary gives every writer: the fields to store and the metadata common to all. */
export interface Summarized extends SummaryParts {
  fold: Message[];
  fields: SummaryFields;
}

export type WriteResult = { ok: true; leaseCleared: boolean } | { ok: false; refusal: FoldRefusal };

/** Where and how a fold's outcome is stored. */
export interface FoldWriter {
  /** Under the lease, before any model work: a reason ends the fold with nothing written. */
  stillWanted?: () => Promise<string | null>;
  /** The memory of a good summary. */
  memory: (s: Summarized) => Memory;
  /** The FAILED row of a failed summary. */
  failed: (s: Omit<Summarized, "fields">, error: string, extra: Partial<Memory["metadata"]>) => Memory;
  /** Writes a FAILED row. */
  putFailed: (failed: Memory) => Promise<unknown>;
  /** Writes the memory; `leaseCleared` when the write itself released the lease (a commit). */
  write: (memory: Memory, owner: string) => Promise<WriteResult>;
}

export type FoldRun = { ok: true; memory: Memory } | { ok: false; refusal: FoldRefusal };

/**
 * Summarizes `ask.fold` under the lease and writes the result with `writer`. A fold whose summary
 * would take more than `maxSummarizerCalls` calls folds its oldest part that fits (a whole one
 * fails instead); the model work is admitted against the tenant's daily budget under the lease.
 */
export async function runFold(deps: ServiceDeps, key: ProcessKey, view: ActiveView, base: Tunables, ask: FoldAsk, writer: FoldWriter): Promise<FoldRun> {
  // Whether the summarizer can run at all is known before the lease: if not, nothing is written.
  const ready = await summarizerFor(deps, key, base, ask.contextWindow);
  if (!ready.ok) return { ok: false, refusal: { kind: "summarizer", reason: ready.reason } };
  const { inputCap, tunables } = ready;
  const sized = foldWithinCallCap(ask.fold, inputCap, tunables);
  // The rest stays active for the next fold. A range must fold whole, and a first run too large
  // for the cap cannot be cut: both are refused by the summary step as a FAILED row.
  const cut = sized.cut && sized.fold.length > 0 && !ask.whole ? sized.fold : ask.fold;
  // A provider fold cuts where the provider's rules allow, and sends the range up to the cut (./provider-fold.ts).
  const range = providerFoldRange(ready.summarizer, view, cut, newestSummary(view));
  const fold = range.fold;
  if (fold !== ask.fold) {
    deps.log.info("fold cut to the summarizer call cap", { processId: key.processId, asked: ask.fold.length, folding: fold.length, calls: sized.calls });
  }

  const { owner, lease } = await takeLease(deps, key, view, {
    ...(ask.owner ? { owner: ask.owner } : {}),
    ...(ask.holdCheckTokens !== undefined ? { replayTokens: ask.holdCheckTokens } : {}),
  });
  // Another compaction holds the process or just finished: back off instead of paying for a summary.
  if (!lease.ok) return { ok: false, refusal: { kind: "lease", refusal: lease.reason } };
  let leaseCleared = false;
  try {
    const unwanted = (await writer.stillWanted?.()) ?? null;
    if (unwanted !== null) return { ok: false, refusal: { kind: "unwanted", reason: unwanted } };
    const admission = await admitModelWork(deps, key.tenantId, estimateFoldTokens(sized, tunables.summaryMaxTokens));
    if (!admission.ok) return { ok: false, refusal: { kind: "budget", refusal: admission.refusal } };
    const { summarizer, use } = metered(ready.summarizer);
    const prior = newestSummary(view);
    // A stopwatch of real work, never a deadline: it stays on the wall clock (a test's clock stands still).
    const started = performance.now();
    const needs = await foldNeeds(deps, key, prior, fold, { tunables, contextWindow: ask.contextWindow });
    const plan = await providerFoldAsk(deps, key, summarizer, prior, { ...ask, fold }, range.sent);
    const asked = await summarizeChecked(deps, summarizer, inputCap, tunables, plan, prior?.content ?? null, needs.required);
    await recordModelUse(deps, admission, "summary", use);
    if (!asked.ok && FALLS_BACK(asked)) deps.metrics.summarizerFailed(summarizer.provider);
    const { summary, by, fallback } = await orOffline(deps, key, ask, asked, summarizer, (offline) =>
      summarizeOffline(offline, inputCap, tunables, { ...ask, fold }, prior?.content ?? null, needs.required),
    );
    const summarizerMs = Math.round(performance.now() - started);
    deps.metrics.summarizerWallTime(metricModeOf(ask.mode), summarizerMs, by.provider);
    if (fallback) deps.metrics.summarizerFallback();
    const common = {
      fold,
      prior,
      at: deps.clock.now(),
      metadata: {
        compactedMessages: fold.length,
        provider: by.provider,
        model: by.model,
        summarizerCalls: summary.calls,
        summarizerMs,
        ...(summary.usage ? { usage: summary.usage } : {}),
        ...(summary.ok && summary.truncated ? { truncated: true } : {}),
        ...(fallback ? { fallback } : {}),
        // A block past the inline size needs the blob store (docs/summarizers.md, "Provider folds").
        ...providerFoldMetadata(summarizer, by, summary, range, deps.blobs ? NATIVE_BLOCK_MAX_BYTES : NATIVE_INLINE_MAX_BYTES),
      },
    };
    const fail = async (error: string, extra: Partial<Memory["metadata"]> = {}) => {
      const failed = writer.failed(common, error, extra);
      await storeFailure(writer.putFailed, failed);
      deps.metrics.foldOutcome("failed");
      return failed.id;
    };
    if (!summary.ok) {
      const memoryId = await fail(summary.code, summary.gate ? { qualityGate: summary.gate } : {});
      // The code for tenants; the provider's words only in the log (docs/summarizers.md, "Failures").
      deps.log.warn("compaction failed: summarizer", { processId: key.processId, memoryId, code: summary.code, error: summary.error });
      return { ok: false, refusal: { kind: "summary", code: summary.code, memoryId, ...(summary.limit ? { limit: summary.limit } : {}) } };
    }
    const whole = writer.memory({ ...common, fields: summaryFields(needs, fold, { ...summary, ...(common.metadata.providerFold?.block ? {} : { native: undefined }) }) });
    // A block past the inline size goes to the blob store before the row names it.
    const memory = await keepBlock(deps, key, whole);
    const written = await unlessTooLarge(writer.write(memory, owner));
    if (written === null) {
      // Refused whole: nothing was written and the lease is still ours (released below).
      const memoryId = await fail(SUMMARY_TOO_LARGE);
      deps.log.warn("compaction failed: summary too large to store", { processId: key.processId, memoryId, lines: memory.citations?.length });
      return { ok: false, refusal: { kind: "too_large", memoryId } };
    }
    if (!written.ok) return { ok: false, refusal: written.refusal };
    // A sweep that ran between the put and the write may have deleted the blob: put it back.
    if (memory.nativeBlob) await keepBlock(deps, key, whole, true);
    deps.metrics.foldOutcome("ok");
    leaseCleared = written.leaseCleared;
    return { ok: true, memory };
  } finally {
    if (!leaseCleared) await releaseLease(deps, key, owner);
  }
}

/**
 * Summarizer failures the offline summarizer stands in for: a refused summary or a failing
 * provider; not a limit of the plan, nor a call with nothing to summarize.
 */
const FALLS_BACK = (failure: Extract<ChunkedSummary, { ok: false }>) => failure.limit === undefined && failure.code !== "nothing_to_summarize";

/**
 * The summary a fold commits: the summarizer's, or, in a mode that falls back to offline
 * (EMERGENCY) when the summarizer failed, the offline summarizer's with the failure's code as the
 * reason (docs/summarizers.md, "Quality gate"). Plan limits (`summarizer_call_cap`, a stalled
 * merge) are not summarizer failures and do not fall back.
 */
async function orOffline(
  deps: ServiceDeps,
  key: ProcessKey,
  ask: FoldAsk,
  asked: ChunkedSummary,
  summarizer: Summarizer,
  summarize: (offline: Summarizer) => Promise<ChunkedSummary>,
): Promise<{ summary: ChunkedSummary; by: Pick<Summarizer, "provider" | "model">; fallback?: { summarizer: string; reason: string } }> {
  const mode = ask.mode;
  if (asked.ok || mode === "RANGE" || !policyOf(mode).fallsBackToOffline || !deps.offlineSummarizer || !FALLS_BACK(asked)) {
    return { summary: asked, by: summarizer };
  }
  const offline = deps.offlineSummarizer(summarizer.maxOutputTokens);
  const own = await summarize(offline);
  deps.log.warn("compaction fell back to the offline summarizer", { processId: key.processId, code: asked.code, error: asked.error, offlineOk: own.ok });
  // Should the offline summary fail too, the FAILED row records the summarizer's own failure.
  if (!own.ok) return { summary: asked, by: summarizer };
  // The summarizer's calls and cost stay counted.
  const summary: ChunkedSummary = { ...own, calls: asked.calls + own.calls, ...(asked.usage ? { usage: asked.usage } : {}) };
  return { summary, by: offline, fallback: { summarizer: offline.provider, reason: asked.code } };
}

/**
 * Stores a FAILED row with `write`. A row whose sources alone outgrow an item (a fold of some
 * 13,000 messages) is stored without them; `metadata.compactedMessages` still counts them.
 */
async function storeFailure(write: (failed: Memory) => Promise<unknown>, failed: Memory): Promise<void> {
  try {
    await write(failed);
  } catch (e) {
    if (!isItemTooLarge(e)) throw e;
    await write({ ...failed, sourceRefs: [] });
  }
}
