/**
 * Committing a PREPARED fold in a turn (docs/compaction.md, "What a turn does"): the commit
 * protocol without the summarizer step, only if the fold still fits the state it meets.
 */
import { tokensAfterFold } from "../domain/fold-size.js";
import type { Memory } from "../domain/model.js";
import type { FoldModeName } from "../domain/mode-policy.js";
import type { Tunables } from "../domain/tunables.js";
import { newestSummary } from "../domain/replay.js";
import { foldsByStrength } from "../domain/selector.js";
import { effectiveStrength } from "../domain/strength.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { afterCommit, commitMemory, LEASE_REFUSAL, metricModeOf } from "./commit.js";
import type { ServiceDeps } from "./deps.js";
import { discard } from "./fold-queue.js";
import { SUMMARY_TOO_LARGE, unlessTooLarge } from "./fold-pipeline.js";
import { releaseLease } from "./lease.js";
import { takeLease } from "./lease.js";

export type PreparedCommit =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; reason: "stale" }
  | { ok: false; reason: string; fold: Memory };

/**
 * Commits a PREPARED fold: the commit protocol without the summarizer step. An EMERGENCY turn
 * commits it itself (`producedBy: "prepared"`); otherwise the worker does, asked by the turn that
 * found it due (`producedBy: "worker"`, services/worker-commit.ts).
 */
export async function commitPrepared(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: Memory,
  o: { mode: FoldModeName; tokensBefore: number; producedBy?: "prepared" | "worker"; retentionDays: Tunables["retentionDays"] },
): Promise<PreparedCommit> {
  const prior = newestSummary(view);
  // The replay index does not carry sourceRefs: read the fold itself (only on the committing turn).
  const full = await deps.store.getMemory(key, fold.id);
  if (!full || full.status !== "PREPARED") return { ok: false, reason: "stale" };
  const active = new Map(view.messages.map((m) => [m.id, m]));
  // Still active, and still foldable by its strength now (a message pinned since stays), both in
  // the mode it was prepared for and in the mode it is committed as (an EMERGENCY fold of strong
  // messages is not committed as a HARD one).
  const mode = (full.metadata.preparedFor ?? "HARD") as FoldModeName;
  const foldable = (id: string) => {
    const m = active.get(id);
    return m !== undefined && foldsByStrength(effectiveStrength(m), mode) && foldsByStrength(effectiveStrength(m), o.mode);
  };
  if ((full.metadata.supersededMemoryId ?? null) !== (prior?.id ?? null)) {
    await discard(deps, key, full, "stale: it no longer chains the active summary", "discarded");
    return { ok: false, reason: "stale" };
  }
  // Still chaining the active summary, a fold that covers a message this read does not know is
  // newer than the read (extended since, services/fold-extension.ts): read again, never discard.
  if (!full.sourceRefs.every((id) => active.has(id))) return { ok: false, reason: "commit_conflict", fold };
  if (!full.sourceRefs.every(foldable)) {
    await discard(deps, key, full, "stale: a message it covers was folded, pinned or made stronger since", "discarded");
    return { ok: false, reason: "stale" };
  }
  const { owner, now, lease } = await takeLease(deps, key, view);
  if (!lease.ok) return { ok: false, reason: LEASE_REFUSAL[lease.reason], fold };
  const { expiresAt: _expires, discardReason: _reason, ...metadata } = full.metadata;
  const memory: Memory = {
    ...full,
    status: "OK",
    createdAt: now.toISOString(),
    supersededAt: null,
    metadata: { ...metadata, mode: o.mode, producedBy: o.producedBy ?? "prepared", tokensBefore: o.tokensBefore },
  };
  const folded = full.sourceRefs.map((id) => active.get(id)!);
  memory.metadata.tokensAfter = tokensAfterFold(view, { fold: folded, tokensBefore: o.tokensBefore }, memory.tokens);
  const commit = await unlessTooLarge(commitMemory(deps, key, view, owner, memory, { fromFold: "PREPARED", retentionDays: o.retentionDays }));
  if (commit === null) {
    // The summary's own fields grew past what one item holds: a fresh fold is prepared instead.
    await releaseLease(deps, key, owner);
    await discard(deps, key, full, SUMMARY_TOO_LARGE, "discarded");
    return { ok: false, reason: "stale" };
  }
  if (!commit.ok) {
    await releaseLease(deps, key, owner);
    deps.log.warn("compaction commit conflict", { processId: key.processId, foldId: fold.id });
    return { ok: false, reason: "commit_conflict", fold };
  }
  deps.metrics.preparedFold("used");
  const after = await afterCommit(deps, key, memory, { pendingArchive: commit.pendingArchive, metricMode: metricModeOf(o.mode), before: view });
  return { ok: true, memory, view: after };
}
