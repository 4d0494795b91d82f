/**
 * The commit protocol (docs/compaction.md, "The commit protocol"): lease, summarize, one
 * transaction, roll forward. The summarizing step is ./fold-pipeline.ts; this module says where a
 * committing fold writes. A failed summary writes a FAILED row and nothing else; every committed
 * fold ends with {@link afterCommit}, however it was produced.
 */
import { compactionLogLine } from "../../domain/compaction-log.js";
import { domainEvent } from "../../domain/events.js";
import { tokensAfterFold } from "../../domain/fold-size.js";
import { metricModeOf } from "../../domain/fold/lifecycle.js";
import { wireReason, type BudgetRefusal, type FoldRefusal } from "../../domain/fold/refusal.js";
import * as rows from "../../domain/fold/rows.js";
import type { Memory, Message } from "../../domain/model.js";
import { newestSummary } from "../../domain/replay.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ServiceDeps } from "../deps.js";
import { runFold, type FoldAsk } from "./fold-pipeline.js";
import { publishSafely } from "../../ports/events.js";
import { settledView } from "./settle.js";

export interface FoldPlan extends FoldAsk {
  fold: Message[];
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

export type FoldOutcome =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; refusal: FoldRefusal; reason: string; memoryId?: string; budget?: BudgetRefusal };

/** What a committing fold answers for a refusal: its wire reason, and the FAILED row or budget refusal it carries. */
export function refused(refusal: FoldRefusal): Extract<FoldOutcome, { ok: false }> {
  return {
    ok: false,
    refusal,
    reason: wireReason(refusal),
    ...(refusal.kind === "summary" || refusal.kind === "too_large" ? { memoryId: refusal.memoryId } : {}),
    ...(refusal.kind === "budget" ? { budget: refusal.refusal } : {}),
  };
}

/**
 * Steps 2-6 of the commit protocol: the fold pipeline, writing the summary in the commit
 * transaction. Over the tenant's daily budget the answer is `budget_exceeded` (nothing written).
 */
export async function foldAndCommit(deps: ServiceDeps, key: ProcessKey, view: ActiveView, base: Tunables, plan: FoldPlan): Promise<FoldOutcome> {
  let pendingArchive = false;
  const tag = { mode: plan.mode, producedBy: plan.producedBy ?? ("inline" as const) };
  const run = await runFold(deps, key, view, base, plan, {
    // A manual compaction past its budget has queued the same fold for the worker and released its
    // lease; a lease this fold took only after that must not lead to a second summary.
    stillWanted: async () => (plan.abandoned?.aborted ? "abandoned" : null),
    failed: (s, error, extra) => rows.failed(deps.ids.memory(s.at), key.processId, s, tag, { metadata: plan.metadata, error, extra }),
    putFailed: (failed) => deps.store.putMemory(key, failed),
    memory: (s) => {
      const memory = rows.committed(plan.memoryId ?? deps.ids.memory(s.at), key.processId, s, { ...tag, tokensBefore: plan.tokensBefore }, plan.metadata);
      memory.metadata.tokensAfter = tokensAfterFold(view, { ...plan, fold: s.fold }, memory.tokens);
      return memory;
    },
    write: async (memory, owner) => {
      const commit = await commitMemory(deps, key, view, owner, memory, { ...plan, retentionDays: base.retentionDays });
      if (!commit.ok) {
        deps.log.warn("compaction commit conflict", { processId: key.processId });
        return { ok: false, refusal: { kind: "commit_conflict" } };
      }
      pendingArchive = commit.pendingArchive;
      return { ok: true, leaseCleared: true }; // the commit cleared the lease
    },
  });
  if (!run.ok) return refused(run.refusal);
  const after = await afterCommit(deps, key, run.memory, { pendingArchive, before: view, manual: plan.manual });
  return { ok: true, memory: run.memory, view: after };
}

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
    replayEpoch: view.state.replayEpoch,
    ...(view.state.lastReplay ? { lastReplay: view.state.lastReplay } : {}),
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
  o: { pendingArchive: boolean; before: ActiveView; manual?: boolean | undefined },
): Promise<ActiveView> {
  const metricMode = metricModeOf(memory.metadata.mode ?? "HARD");
  if (o.pendingArchive) await deps.store.finishPendingArchive(key, memory.id);
  const folded = memory.sourceRefs.length;
  const { tokensBefore, tokensAfter } = memory.metadata;
  const tokensSaved = tokensBefore !== undefined && tokensAfter !== undefined ? tokensBefore - tokensAfter : undefined;
  deps.metrics.compaction(metricMode, folded, tokensSaved);
  deps.log.info(logLineOf(memory, o), {
    processId: key.processId,
    mode: metricMode,
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
