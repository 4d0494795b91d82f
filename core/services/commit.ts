/**
 * The commit protocol (docs/compaction.md, "The commit protocol"): lease, summarize, one
 * transaction, roll forward. A failed summary writes a FAILED row and nothing else; every
 * committed fold ends with {@link afterCommit}, however it was produced.
 */
import { isItemTooLarge } from "../domain/errors.js";
import { domainEvent } from "../domain/events.js";
import { tokensAfterFold } from "../domain/fold-size.js";
import type { Memory, Message } from "../domain/model.js";
import { newestSummary } from "../domain/replay.js";
import { estimateFoldTokens, foldWithinCallCap } from "../domain/summary-plan.js";
import type { Tunables } from "../domain/tunables.js";
import type { CompactionMetricMode } from "../ports/metrics.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import type { ServiceDeps } from "./deps.js";
import { takeLease } from "./lease.js";
import { admitModelWork, BUDGET_EXCEEDED, recordModelUse, type BudgetRefusal } from "./model-budget.js";
import { metered } from "./model-usage.js";
import { publishSafely } from "../ports/events.js";
import { summarizeChecked, summarizerFor } from "./summarize.js";
import { foldNeeds, summaryFields } from "./summary-fields.js";
import { settledView } from "./settle.js";

/** The metric dimension of a compaction mode (`HARD` -> `hard`). */
export const metricModeOf = (mode: string) => mode.toLowerCase() as CompactionMetricMode;

export interface FoldPlan {
  fold: Message[];
  metricMode: CompactionMetricMode;
  eventMode: string;
  instructions?: string | undefined;
  topicLabel?: string;
  tokensBefore: number;
  metadata?: Partial<Memory["metadata"]>;
  marker?: Message;
  owner?: string;
  /** Aborted when the caller gave up on this fold (a manual compaction past its budget). */
  abandoned?: AbortSignal;
  /** The id of the stored summary (default: a new one) and the fold row it replaces. */
  memoryId?: string;
  fromFold?: "QUEUED";
  producedBy?: "inline" | "worker";
  /** Own replay tokens to check against a revert hold (automatic compactions only). */
  holdCheckTokens?: number;
  /** The model window the fold makes room in, when known: the summary budget grows with it. */
  contextWindow?: number;
  /**
   * The fold must be taken whole (a range): past `maxSummarizerCalls` it fails instead of folding
   * its oldest part.
   */
  whole?: boolean;
}

/** The reason a fold answers when the lease is refused (shared by every path that takes it). */
export const LEASE_REFUSAL = {
  leased: "compaction_in_progress",
  version_changed: "concurrent_compaction",
  not_found: "concurrent_compaction",
  revert_hold: "reverted_recently",
} as const;

/**
 * The reason of a fold whose summary the store refused for its size: its stored provenance (the
 * per-line citations and the loss report) or its sources outgrew one item (DynamoDB's 400 KB).
 */
export const SUMMARY_TOO_LARGE = "summary_too_large: the summary with its provenance and sources does not fit one stored item (400 KB)";

/**
 * Stores a FAILED row with `write`. A row whose sources alone outgrow an item (a fold of some
 * 13,000 messages) is stored without them; `metadata.compactedMessages` still counts them.
 */
export async function storeFailure(write: (failed: Memory) => Promise<unknown>, failed: Memory): Promise<void> {
  try {
    await write(failed);
  } catch (e) {
    if (!isItemTooLarge(e)) throw e;
    await write({ ...failed, sourceRefs: [] });
  }
}

/** Runs a write; the store's refusal of an item for its size comes back as null. */
export async function unlessTooLarge<T>(write: Promise<T>): Promise<T | null> {
  try {
    return await write;
  } catch (e) {
    if (isItemTooLarge(e)) return null;
    throw e;
  }
}

export type FoldOutcome =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; reason: string; memoryId?: string; budget?: BudgetRefusal };

/**
 * Steps 3-6 of the commit protocol. A fold whose summary would take more than
 * `maxSummarizerCalls` calls folds its oldest part that fits (docs/compaction.md, "Summarizing");
 * the model work is admitted against the tenant's daily budget under the lease, and refused with
 * `budget_exceeded` (nothing written) when it does not fit.
 */
export async function foldAndCommit(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  base: Tunables,
  asked: FoldPlan,
): Promise<FoldOutcome> {
  // Whether the summarizer can run at all is known before the lease: if not, the caller gets a
  // reason (a turn still answers 200) and nothing is written.
  const ready = await summarizerFor(deps, key, base, asked.contextWindow);
  if (!ready.ok) return { ok: false, reason: ready.reason };
  const { inputCap, tunables } = ready;
  const sized = foldWithinCallCap(asked.fold, inputCap, tunables);
  // The rest stays active for the next fold. A range must fold whole, and a first run too large
  // for the cap cannot be cut: both are refused by the summary step as a FAILED row.
  const plan = sized.cut && sized.fold.length > 0 && !asked.whole ? { ...asked, fold: sized.fold } : asked;
  if (plan !== asked) {
    deps.log.info("fold cut to the summarizer call cap", { processId: key.processId, asked: asked.fold.length, folding: plan.fold.length, calls: sized.calls });
  }

  const { owner, lease } = await takeLease(deps, key, view, {
    ...(plan.owner ? { owner: plan.owner } : {}),
    ...(plan.holdCheckTokens !== undefined ? { replayTokens: plan.holdCheckTokens } : {}),
  });
  // Another compaction holds the process or just finished: back off instead of paying for a summary.
  if (!lease.ok) return { ok: false, reason: LEASE_REFUSAL[lease.reason] };
  // A manual compaction past its budget has queued the same fold for the worker and released its
  // lease; a lease this fold took only after that must not lead to a second summary.
  if (plan.abandoned?.aborted) {
    await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
    return { ok: false, reason: "abandoned" };
  }

  const prior = newestSummary(view);
  let committed = false;
  try {
    const admission = await admitModelWork(deps, key.tenantId, estimateFoldTokens(sized, tunables.summaryMaxTokens));
    if (!admission.ok) return { ok: false, reason: BUDGET_EXCEEDED, budget: admission.refusal };
    const { summarizer, use } = metered(ready.summarizer);
    const started = Date.now();
    const needs = await foldNeeds(deps, key, prior, plan.fold);
    const summary = await summarizeChecked(deps, summarizer, inputCap, tunables, plan, prior?.content ?? null, needs.required);
    const summarizerMs = Date.now() - started;
    await recordModelUse(deps, admission, "summary", use);
    deps.metrics.summarizerWallTime(plan.metricMode, summarizerMs);
    const at = deps.clock.now();
    const base = {
      processId: key.processId,
      kind: "ARCHIVED_CHAT" as const,
      sourceRefs: plan.fold.map((m) => m.id),
      createdAt: at.toISOString(),
      supersededAt: null,
    };
    const metadata = {
      compactedMessages: plan.fold.length,
      provider: summarizer.provider,
      model: summarizer.model,
      mode: plan.eventMode,
      producedBy: plan.producedBy ?? ("inline" as const),
      summarizerCalls: summary.calls,
      summarizerMs,
      ...(summary.usage ? { usage: summary.usage } : {}),
      ...plan.metadata,
    };
    const fail = async (error: string, extra: Partial<Memory["metadata"]> = {}) => {
      const failed: Memory = { ...base, id: deps.ids.memory(at), status: "FAILED", content: "", metadata: { ...metadata, error, ...extra }, tokens: 0 };
      await storeFailure((m) => deps.store.putMemory(key, m), failed);
      return failed;
    };
    if (!summary.ok) {
      const failed = await fail(summary.code, summary.gate ? { qualityGate: summary.gate } : {});
      // The code for tenants; the provider's words only in the log (docs/summarizers.md, "Failures").
      deps.log.warn("compaction failed: summarizer", { processId: key.processId, memoryId: failed.id, code: summary.code, error: summary.error });
      return { ok: false, reason: `summarizer_failed: ${summary.code}`, memoryId: failed.id };
    }
    const fields = summaryFields(needs, plan.fold, summary);
    const memory: Memory = {
      ...base,
      id: plan.memoryId ?? deps.ids.memory(at),
      status: "OK",
      content: fields.content,
      metadata: {
        ...metadata,
        ...(prior ? { supersededMemoryId: prior.id } : {}),
        tokensBefore: plan.tokensBefore,
        loss: fields.loss,
      },
      tokens: fields.tokens,
      citations: fields.citations,
      droppedUnits: fields.droppedUnits,
      ...(fields.keepUnits ? { keepUnits: fields.keepUnits } : {}),
    };
    memory.metadata.tokensAfter = tokensAfterFold(view, plan, memory.tokens);
    const commit = await unlessTooLarge(
      deps.store.commitCompaction(key, {
        leaseOwner: owner,
        expectedVersion: view.state.version,
        memory,
        priorSummaryId: prior?.id ?? null,
        archiveIds: memory.sourceRefs,
        ...(plan.marker ? { marker: plan.marker } : {}),
        ...(plan.fromFold ? { fromFold: plan.fromFold } : {}),
        at: at.toISOString(),
      }),
    );
    if (commit === null) {
      // Refused whole: nothing was written and the lease is still ours (released below).
      const failed = await fail(SUMMARY_TOO_LARGE);
      deps.log.warn("compaction failed: summary too large to store", { processId: key.processId, memoryId: failed.id, lines: memory.citations?.length });
      return { ok: false, reason: SUMMARY_TOO_LARGE, memoryId: failed.id };
    }
    if (!commit.ok) {
      deps.log.warn("compaction commit conflict", { processId: key.processId });
      return { ok: false, reason: "commit_conflict" };
    }
    committed = true; // the commit cleared the lease
    const after = await afterCommit(deps, key, memory, { pendingArchive: commit.pendingArchive, metricMode: plan.metricMode });
    return { ok: true, memory, view: after };
  } finally {
    if (!committed) {
      await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
    }
  }
}

/**
 * What follows every committed fold, however it was produced: finish the archive roll-forward,
 * count it, log it, announce it (MemoryCompacted says how it was produced), re-read the view.
 */
export async function afterCommit(
  deps: ServiceDeps,
  key: ProcessKey,
  memory: Memory,
  o: { pendingArchive: boolean; metricMode: CompactionMetricMode },
): Promise<ActiveView> {
  if (o.pendingArchive) await deps.store.finishPendingArchive(key, memory.id);
  const folded = memory.sourceRefs.length;
  deps.metrics.compaction(o.metricMode, folded);
  deps.log.info("compaction ok", {
    processId: key.processId,
    mode: o.metricMode,
    messagesFolded: folded,
    summaryChars: memory.content.length,
    memoryId: memory.id,
    producedBy: memory.metadata.producedBy,
  });
  await publishSafely(
    deps,
    domainEvent("MemoryCompacted", {
      tenantId: key.tenantId,
      processId: key.processId,
      memoryId: memory.id,
      mode: memory.metadata.mode,
      compactedMessages: folded,
      producedBy: memory.metadata.producedBy,
    }),
  );
  return settledView(deps, key);
}
