/**
 * The commit protocol (docs/compaction.md, "The commit protocol"): lease, summarize, one
 * transaction, roll forward. The summarizing step is ./fold-pipeline.ts; this module says where a
 * committing fold writes. A failed summary writes a FAILED row and nothing else; every committed
 * fold ends with {@link afterCommit}, however it was produced.
 */
import { compactionLogLine } from "../domain/compaction-log.js";
import { domainEvent } from "../domain/events.js";
import { tokensAfterFold } from "../domain/fold-size.js";
import type { Memory, Message } from "../domain/model.js";
import { newestSummary } from "../domain/replay.js";
import type { CompactionMetricMode } from "../ports/metrics.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import type { Tunables } from "../domain/tunables.js";
import type { ServiceDeps } from "./deps.js";
import { runFold, SUMMARY_TOO_LARGE, type FoldAsk, type FoldFailure, type LeaseRefusal } from "./fold-pipeline.js";
import { BUDGET_EXCEEDED, type BudgetRefusal } from "./model-budget.js";
import { publishSafely } from "../ports/events.js";
import { settledView } from "./settle.js";

/** The metric dimension of a compaction mode (`HARD` -> `hard`). */
export const metricModeOf = (mode: string) => mode.toLowerCase() as CompactionMetricMode;

export interface FoldPlan extends FoldAsk {
  fold: Message[];
  eventMode: string;
  tokensBefore: number;
  metadata?: Partial<Memory["metadata"]>;
  marker?: Message;
  /** Aborted when the caller gave up on this fold (a manual compaction past its budget). */
  abandoned?: AbortSignal;
  /** The id of the stored summary (default: a new one) and the fold row it replaces. */
  memoryId?: string;
  fromFold?: "QUEUED";
  producedBy?: "inline" | "worker";
  /** A `POST .../compaction` request's fold: tied to no turn, logged as `manual`. */
  manual?: boolean;
}

/** The reason a fold answers when the lease is refused (shared by every path that takes it). */
export const LEASE_REFUSAL: Readonly<Record<LeaseRefusal, string>> = {
  leased: "compaction_in_progress",
  version_changed: "concurrent_compaction",
  not_found: "concurrent_compaction",
  revert_hold: "reverted_recently",
};

export type FoldOutcome =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; reason: string; memoryId?: string; budget?: BudgetRefusal };

/** The reason a committing fold answers for each way it can fail. */
function reasonOf(failure: FoldFailure): Extract<FoldOutcome, { ok: false }> {
  switch (failure.step) {
    case "summarizer":
    case "unwanted":
    case "write":
      return { ok: false, reason: failure.reason };
    case "lease":
      return { ok: false, reason: LEASE_REFUSAL[failure.refusal] };
    case "budget":
      return { ok: false, reason: BUDGET_EXCEEDED, budget: failure.refusal };
    case "summary":
      return { ok: false, reason: `summarizer_failed: ${failure.code}`, memoryId: failure.memoryId };
    case "too_large":
      return { ok: false, reason: SUMMARY_TOO_LARGE, memoryId: failure.memoryId };
  }
}

/**
 * Steps 2-6 of the commit protocol: the fold pipeline, writing the summary in the commit
 * transaction. Over the tenant's daily budget the answer is `budget_exceeded` (nothing written).
 */
export async function foldAndCommit(deps: ServiceDeps, key: ProcessKey, view: ActiveView, base: Tunables, plan: FoldPlan): Promise<FoldOutcome> {
  let pendingArchive = false;
  const run = await runFold(deps, key, view, base, plan, {
    // A manual compaction past its budget has queued the same fold for the worker and released its
    // lease; a lease this fold took only after that must not lead to a second summary.
    stillWanted: async () => (plan.abandoned?.aborted ? "abandoned" : null),
    failed: (s, error, extra) => ({
      ...rowBase(key, s.fold, s.at),
      id: deps.ids.memory(s.at),
      status: "FAILED",
      content: "",
      metadata: { ...s.metadata, ...modeMetadata(plan), error, ...extra },
      tokens: 0,
    }),
    putFailed: (failed) => deps.store.putMemory(key, failed),
    memory: (s) => {
      const memory: Memory = {
        ...rowBase(key, s.fold, s.at),
        id: plan.memoryId ?? deps.ids.memory(s.at),
        status: "OK",
        content: s.fields.content,
        metadata: {
          ...s.metadata,
          ...modeMetadata(plan),
          ...(s.prior ? { supersededMemoryId: s.prior.id } : {}),
          tokensBefore: plan.tokensBefore,
          loss: s.fields.loss,
        },
        tokens: s.fields.tokens,
        citations: s.fields.citations,
        droppedUnits: s.fields.droppedUnits,
        ...(s.fields.keepUnits ? { keepUnits: s.fields.keepUnits } : {}),
      };
      memory.metadata.tokensAfter = tokensAfterFold(view, { ...plan, fold: s.fold }, memory.tokens);
      return memory;
    },
    write: async (memory, owner) => {
      const commit = await commitMemory(deps, key, view, owner, memory, { ...plan, retentionDays: base.retentionDays });
      if (!commit.ok) {
        deps.log.warn("compaction commit conflict", { processId: key.processId });
        return { ok: false, reason: "commit_conflict" };
      }
      pendingArchive = commit.pendingArchive;
      return { ok: true, leaseCleared: true }; // the commit cleared the lease
    },
  });
  if (!run.ok) return reasonOf(run.failure);
  const after = await afterCommit(deps, key, run.memory, { pendingArchive, metricMode: plan.metricMode, before: view, manual: plan.manual });
  return { ok: true, memory: run.memory, view: after };
}

const rowBase = (key: ProcessKey, fold: readonly Message[], at: Date) => ({
  processId: key.processId,
  kind: "ARCHIVED_CHAT" as const,
  sourceRefs: fold.map((m) => m.id),
  createdAt: at.toISOString(),
  supersededAt: null,
});

const modeMetadata = (plan: FoldPlan) => ({ mode: plan.eventMode, producedBy: plan.producedBy ?? ("inline" as const), ...plan.metadata });

/**
 * Step 4 of the commit protocol, however the memory was made (summarized now or prepared): one
 * transaction under our lease. Throws the store's refusal of the memory for its size. The
 * retention the committer resolved (`retentionDays`, from the tunables it already holds) is
 * recorded on the memory, so a later change applies to later folds only, and the store gives each
 * original it archives the matching expiry in the same transaction.
 */
export async function commitMemory(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  owner: string,
  memory: Memory,
  o: { marker?: Message | undefined; fromFold?: "QUEUED" | "PREPARED" | undefined; retentionDays: Tunables["retentionDays"] },
) {
  const { retentionDays } = o;
  if (retentionDays) memory.metadata.retentionDays = retentionDays;
  else delete memory.metadata.retentionDays;
  return deps.store.commitCompaction(key, {
    leaseOwner: owner,
    expectedVersion: view.state.version,
    memory,
    priorSummaryId: newestSummary(view)?.id ?? null,
    archiveIds: memory.sourceRefs,
    ...(o.marker ? { marker: o.marker } : {}),
    ...(o.fromFold ? { fromFold: o.fromFold } : {}),
    at: memory.createdAt,
  });
}

/**
 * What follows every committed fold, however it was produced: finish the archive roll-forward,
 * count it, log it, announce it (MemoryCompacted says how it was produced), re-read the view.
 */
export async function afterCommit(
  deps: ServiceDeps,
  key: ProcessKey,
  memory: Memory,
  o: { pendingArchive: boolean; metricMode: CompactionMetricMode; before: ActiveView; manual?: boolean | undefined },
): Promise<ActiveView> {
  if (o.pendingArchive) await deps.store.finishPendingArchive(key, memory.id);
  const folded = memory.sourceRefs.length;
  const { tokensBefore, tokensAfter } = memory.metadata;
  const tokensSaved = tokensBefore !== undefined && tokensAfter !== undefined ? tokensBefore - tokensAfter : undefined;
  deps.metrics.compaction(o.metricMode, folded, tokensSaved);
  deps.log.info(logLineOf(memory, o), {
    processId: key.processId,
    mode: o.metricMode,
    messagesFolded: folded,
    ...(tokensSaved !== undefined ? { tokensSaved } : {}),
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

/**
 * The log line of a committed fold (docs/operations.md, "What the service reports"). A fold committed in a
 * turn (inline or prepared, in a fold mode) names the turn's message: the newest active message
 * when it committed, which is the one the turn appended. Any other fold names its memory.
 */
function logLineOf(memory: Memory, o: { before: ActiveView; manual?: boolean | undefined }): string {
  const producedBy = memory.metadata.producedBy ?? "inline";
  const mode = memory.metadata.mode ?? "";
  const inTurn = !o.manual && producedBy !== "worker" && mode !== "RANGE";
  return compactionLogLine({
    engine: o.before.state.process.engine,
    turn: (inTurn ? o.before.messages.at(-1)?.id : undefined) ?? memory.id,
    how: o.manual ? "manual" : producedBy,
    mode,
    messages: memory.sourceRefs.length,
    chars: memory.content.length,
  });
}
