/**
 * Every write of a fold's row (docs/compaction.md, "A fold's states"): queue, prepare, extend,
 * commit, discard, revert. Each is one conditional write (under the process lease where the
 * protocol takes one), then its metrics, log line and event. The rows come from
 * domain/fold/rows.ts; what a row records of the tunables (its life, the originals' retention) is
 * resolved here. No other module writes a fold's row (test/unit/fold-writes.test.ts).
 */
import { committedLogLine } from "../../domain/compaction-log.js";
import { domainEvent } from "../../domain/events.js";
import { tokensAfterFold } from "../../domain/fold-size.js";
import { metricModeOf, queuedLifeMs, type PreparedFold } from "../../domain/fold/lifecycle.js";
import type { LeaseRefusal } from "../../domain/fold/refusal.js";
import * as rows from "../../domain/fold/rows.js";
import type { Discard } from "../../domain/fold/usability.js";
import type { FoldJob, FoldTarget, Memory, Message } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import type { RangeRequest } from "../../domain/range.js";
import type { FoldUnit } from "../../domain/tool-groups.js";
import { newestSummary } from "../../domain/replay.js";
import type { Tunables } from "../../domain/tunables.js";
import { publishSafely } from "../../ports/events.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { unlessTooLarge } from "../../domain/errors.js";
import type { FoldWriter } from "./fold-pipeline.js";
import { withLease } from "./lease.js";
import { finishRollForward, settledView } from "./settle.js";
import { lossFields } from "./loss-fields.js";

type Metadata = Memory["metadata"];
/** How a summarizing transition stores its outcome; the caller adds its own `stillWanted` check. */
type RowWriter = Omit<FoldWriter, "stillWanted">;

export interface QueueRequest {
  mode: FoldTarget;
  job: FoldJob;
  contextWindow?: number;
  tokensBefore?: number;
  /** What the fold keeps whole, by the chat model's fold rules (`foldRulesFor`). */
  foldUnit?: FoldUnit;
  forced?: boolean;
  instructions?: string | undefined;
  /** A range job: the range and the accepted offer it comes from. */
  range?: RangeRequest & { inboxItemId: string };
  /** The fold's id when it was chosen before it is stored (a range job's, recorded on its offer). */
  id?: string;
}

/**
 * (none) -> QUEUED: stored for the state of `view` (only if the id is free), with the life of its
 * job (`queuedLifeMs`), then the worker is asked for it.
 */
export async function queueFold(deps: ServiceDeps, key: ProcessKey, view: ActiveView, q: QueueRequest): Promise<Memory> {
  const at = deps.clock.now();
  const ttlMs = queuedLifeMs(q.job, deps.compaction.preparedTtlMs);
  const fold = rows.queued({ ...q, id: q.id ?? deps.ids.memory(at), processId: key.processId, at, ttlMs, version: view.state.version });
  await deps.store.storeFold(key, fold, "new");
  await requestFold(deps, key, fold);
  return fold;
}

/**
 * Asks the worker for a queued fold. For a turn's job a lost request is not lost work: a later
 * turn discards the fold once queueTimeoutMs has passed and queues it again. A manual job stays
 * QUEUED for its late request, and turns past queueTimeoutMs no longer wait for it. A
 * range job has no turn behind it, so its request must go out: a failure throws, and the
 * InboxItemAnswered delivery that queued it is retried (and asks again for the same row).
 */
export async function requestFold(deps: ServiceDeps, key: ProcessKey, fold: Memory) {
  const event = domainEvent("CompactionRequested", {
    tenantId: key.tenantId,
    processId: key.processId,
    foldId: fold.id,
    mode: fold.metadata.preparedFor,
    job: fold.metadata.job,
  });
  if (fold.metadata.job === "range") await deps.events.publish(event);
  else await publishSafely(deps, event);
}

/**
 * LIVE -> DISCARDED: marks a queued or prepared fold DISCARDED and counts it, only while it still
 * has the status it was read with: a reader of a stale copy (a late delivery that read it QUEUED)
 * changes nothing once another delivery prepared or committed it.
 */
export async function discard(deps: ServiceDeps, key: ProcessKey, { fold, reason, outcome }: Discard) {
  const out = await deps.store.discardFold(key, fold.id, fold.status, reason, deps.clock.now().toISOString());
  if (out.ok) {
    deps.metrics.preparedFold(outcome);
    deps.log.info("fold discarded", { processId: key.processId, foldId: fold.id, status: fold.status, reason });
  }
}

/**
 * QUEUED -> PREPARED with a new life of `preparedTtlMs`, or QUEUED -> FAILED: the prepare job's
 * writer, under the lease its summary runs in; each write only while the row is still QUEUED.
 */
export function preparing(deps: ServiceDeps, key: ProcessKey, queued: Memory, o: { mode: FoldModeName; extra: Partial<Metadata> }): RowWriter {
  return {
    failed: (s, error, extra) => rows.failedQueued(queued, s, { mode: o.mode, error, extra: { ...o.extra, ...extra } }),
    putFailed: (failed) => deps.store.storeFold(key, failed, "QUEUED"),
    memory: (s) => rows.prepared(queued, s, { mode: o.mode, ttlMs: deps.compaction.preparedTtlMs, extra: o.extra }),
    write: async (prepared) => {
      const stored = await deps.store.storeFold(key, prepared, "QUEUED");
      if (!stored.ok) return { ok: false, refusal: { kind: "write", reason: "discarded while summarizing" } };
      const { id: foldId, sourceRefs, metadata } = prepared;
      deps.log.info("fold prepared", { processId: key.processId, foldId, mode: o.mode, messages: sourceRefs.length, summarizerMs: metadata.summarizerMs });
      return { ok: true, leaseCleared: false };
    },
  };
}

/**
 * PREPARED -> PREPARED (extended): the newer messages of `view` folded into the prepared summary,
 * written only while it is PREPARED and not extended yet, and META is at the version of `view`
 * with our lease. A failed extension writes nothing: the prepared fold stays as it was.
 */
export function extending(deps: ServiceDeps, key: ProcessKey, view: ActiveView, fold: Memory): RowWriter {
  const order = new Map(view.messages.map((m, i) => [m.id, i]));
  return {
    failed: (_s, error) => ({ ...fold, metadata: { ...fold.metadata, error } }),
    putFailed: async () => undefined,
    memory: (s) => {
      const sources = [...fold.sourceRefs, ...s.fold.map((x) => x.id)].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
      // The loss report covers every message the summary now stands for, both parts.
      const covers = new Set(sources);
      return rows.extended(fold, s, { sources, lost: lossFields(view.messages.filter((x) => covers.has(x.id)), s.fields.content) });
    },
    write: async (extended, owner) => {
      const stored = await deps.store.extendFold(key, extended, { owner, version: view.state.version });
      if (!stored.ok) return { ok: false, refusal: { kind: "write", reason: "changed while extending" } };
      deps.metrics.preparedFold("extended");
      const added = extended.metadata.extended?.messages ?? 0;
      deps.log.info("fold extended", { processId: key.processId, foldId: fold.id, added, messages: extended.sourceRefs.length });
      return { ok: true, leaseCleared: false };
    },
  };
}

/** What a fold committed in the run that summarizes it records and replaces. */
export interface CommitAsk {
  mode: FoldTarget;
  producedBy: "inline" | "worker";
  tokensBefore: number;
  metadata?: Partial<Metadata> | undefined;
  marker?: Message | undefined;
  /** The id of the stored summary (default: a new one), and the fold row it replaces. */
  memoryId?: string | undefined;
  fromFold?: "QUEUED" | undefined;
  retentionDays: Tunables["retentionDays"];
}

/**
 * (none, or QUEUED) -> OK in the commit transaction, which clears the lease; or (none) -> FAILED
 * when the summary failed. `committed` hears whether archives are left to roll forward.
 */
export function committing(deps: ServiceDeps, key: ProcessKey, view: ActiveView, ask: CommitAsk, committed: (pendingArchive: boolean) => void): RowWriter {
  const tag = { mode: ask.mode, producedBy: ask.producedBy };
  return {
    failed: (s, error, extra) => rows.failed(deps.ids.memory(s.at), key.processId, s, tag, { metadata: ask.metadata, error, extra }),
    putFailed: (failed) => deps.store.putMemory(key, failed),
    memory: (s) => {
      const memory = rows.committed(ask.memoryId ?? deps.ids.memory(s.at), key.processId, s, { ...tag, tokensBefore: ask.tokensBefore }, ask.metadata);
      memory.metadata.tokensAfter = tokensAfterFold(view, { ...ask, fold: s.fold }, memory.tokens);
      return memory;
    },
    write: async (memory, owner) => {
      const commit = await commitMemory(deps, key, view, owner, memory, ask);
      if (!commit.ok) {
        deps.log.warn("compaction commit conflict", { processId: key.processId });
        return { ok: false, refusal: { kind: "commit_conflict" } };
      }
      committed(commit.pendingArchive);
      return { ok: true, leaseCleared: true };
    },
  };
}

export type PreparedCommitWrite =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; lease: LeaseRefusal }
  | { ok: false; tooLarge: true }
  | { ok: false; conflict: true };

/**
 * PREPARED -> OK under the lease for the version of `view`, as prepared, now. `tooLarge`: the
 * summary's own fields outgrew one item and nothing was written.
 */
export async function commitFromPrepared(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: PreparedFold,
  o: { folded: readonly Pick<Message, "id">[]; mode: FoldModeName; tokensBefore: number; producedBy: "prepared" | "worker"; retentionDays: Tunables["retentionDays"] },
): Promise<PreparedCommitWrite> {
  const leased = await withLease(deps, key, view, {}, async ({ owner, now }) => {
    const memory = rows.fromPrepared(fold.memory, now, { mode: o.mode, producedBy: o.producedBy, tokensBefore: o.tokensBefore });
    memory.metadata.tokensAfter = tokensAfterFold(view, { fold: o.folded, tokensBefore: o.tokensBefore }, memory.tokens);
    const commit = await unlessTooLarge(commitMemory(deps, key, view, owner, memory, { fromFold: "PREPARED", retentionDays: o.retentionDays }));
    return { value: { memory, commit }, cleared: commit?.ok === true };
  });
  if (!leased.ok) return { ok: false, lease: leased.refusal };
  const { memory, commit } = leased.value;
  if (commit === null) return { ok: false, tooLarge: true };
  if (!commit.ok) {
    deps.log.warn("compaction commit conflict", { processId: key.processId, foldId: fold.id });
    return { ok: false, conflict: true };
  }
  deps.metrics.preparedFold("used");
  return { ok: true, memory, view: await afterCommit(deps, key, memory, { pendingArchive: commit.pendingArchive, before: view }) };
}

/**
 * Step 4 of the commit protocol, however the memory was made (summarized now or prepared): one
 * transaction under our lease. Throws the store's refusal of the memory for its size. The
 * retention the committer resolved (`retentionDays`, from the tunables it already holds) is
 * recorded on the memory, so a later change applies to later folds only, and the store gives each
 * original it archives the matching expiry in the same transaction.
 */
async function commitMemory(
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
    replayEpoch: view.state.replayEpoch,
    ...(view.state.lastTurn ? { lastTurn: view.state.lastTurn } : {}),
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
  if (o.pendingArchive) await finishRollForward(deps, key, memory.id);
  const folded = memory.sourceRefs.length;
  const { tokensBefore, tokensAfter } = memory.metadata;
  const tokensSaved = tokensBefore !== undefined && tokensAfter !== undefined ? tokensBefore - tokensAfter : undefined;
  deps.metrics.compaction(metricMode, folded, tokensSaved);
  const line = committedLogLine(memory, { engine: o.before.state.process.engine, newestMessageId: o.before.messages.at(-1)?.id, manual: o.manual });
  deps.log.info(line, {
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

export type RevertWrite =
  | { ok: true; result: { memory: Memory; restoredMessages: number; activeSummaryId: string | null } }
  | { ok: false; reason: "leased" | "changed" };

/**
 * OK -> REVERTED under the lease for the version of `view`, in one transaction with the prior
 * summary made active again, the range marker archived and the revert hold recorded; the rest of
 * the restores rolls forward. `changed`: the state moved since the read (read again at once).
 */
export async function revertFold(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  o: { memory: Memory; prior: Memory | null; marker: Message | null; holdTokens: number; originalsExpireAtEpoch?: number | undefined },
): Promise<RevertWrite> {
  const { memory } = o;
  let at = "";
  const leased = await withLease(deps, key, view, {}, async ({ owner }) => {
    at = deps.clock.now().toISOString();
    const value = await deps.store.revertCompaction(key, {
      leaseOwner: owner,
      expectedVersion: view.state.version,
      memoryId: memory.id,
      priorSummaryId: o.prior?.id ?? null,
      restoreIds: memory.sourceRefs,
      ...(o.marker ? { markerId: o.marker.id } : {}),
      holdTokens: o.holdTokens,
      replayEpoch: view.state.replayEpoch,
      ...(view.state.lastTurn ? { lastTurn: view.state.lastTurn } : {}),
      at,
      ...(o.originalsExpireAtEpoch !== undefined ? { originalsExpireAtEpoch: o.originalsExpireAtEpoch } : {}),
    });
    return { value, cleared: value.ok }; // the commit cleared the lease
  });
  if (!leased.ok) return { ok: false, reason: leased.refusal === "leased" ? "leased" : "changed" };
  if (!leased.value.ok) {
    deps.log.warn("revert commit conflict", { processId: key.processId, memoryId: memory.id });
    return { ok: false, reason: "changed" };
  }
  if (leased.value.pendingArchive) await finishRollForward(deps, key, memory.id);
  const restoredMessages = memory.sourceRefs.length;
  const activeSummaryId = o.prior?.id ?? null;
  deps.metrics.revert(restoredMessages);
  deps.log.info("revert ok", { processId: key.processId, memoryId: memory.id, restoredMessages, activeSummaryId });
  await publishSafely(
    deps,
    domainEvent("MemoryReverted", { tenantId: key.tenantId, processId: key.processId, memoryId: memory.id, restoredMessages, activeSummaryId }),
  );
  return { ok: true, result: { memory: rows.reverted(memory, at), restoredMessages, activeSummaryId } };
}
