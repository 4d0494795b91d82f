/**
 * Committing a PREPARED fold in a turn (docs/compaction.md, "What a turn does"): the commit
 * protocol without the summarizer step, only if the fold still fits the state it meets.
 */
import { tokensAfterFold } from "../../domain/fold-size.js";
import { asFold, type PreparedFold } from "../../domain/fold/lifecycle.js";
import { SUMMARY_TOO_LARGE, type FoldRefusal } from "../../domain/fold/refusal.js";
import * as rows from "../../domain/fold/rows.js";
import { canCommit } from "../../domain/fold/usability.js";
import type { Memory } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { afterCommit, commitMemory } from "./commit.js";
import type { ServiceDeps } from "../deps.js";
import { discard } from "./fold-queue.js";
import { unlessTooLarge } from "./fold-pipeline.js";
import { withLease } from "./lease.js";

/** A commit that did not happen: the fold is gone or discarded (`stale`), or it stays for a later try. */
export type PreparedCommit =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; stale: true }
  | { ok: false; refusal: FoldRefusal; fold: PreparedFold };

/**
 * Commits a PREPARED fold: the commit protocol without the summarizer step. An EMERGENCY turn
 * commits it itself (`producedBy: "prepared"`); otherwise the worker does, asked by the turn that
 * found it due (`producedBy: "worker"`, services/worker-commit.ts).
 */
export async function commitPrepared(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: PreparedFold,
  o: { mode: FoldModeName; tokensBefore: number; producedBy?: "prepared" | "worker"; retentionDays: Tunables["retentionDays"] },
): Promise<PreparedCommit> {
  // The replay index does not carry sourceRefs: read the fold itself (only on the committing turn).
  const row = await deps.store.getMemory(key, fold.id);
  const full = row && asFold(row);
  if (full?.status !== "PREPARED") return { ok: false, stale: true };
  const verdict = canCommit(full, view, o.mode);
  if (!verdict.ok && "readAgain" in verdict) return { ok: false, refusal: { kind: "commit_conflict" }, fold };
  if (!verdict.ok) {
    await discard(deps, key, { fold: full, reason: verdict.discard, outcome: "discarded" });
    return { ok: false, stale: true };
  }
  const leased = await withLease(deps, key, view, {}, async ({ owner, now }) => {
    const memory = rows.fromPrepared(full.memory, now, { mode: o.mode, producedBy: o.producedBy ?? "prepared", tokensBefore: o.tokensBefore });
    memory.metadata.tokensAfter = tokensAfterFold(view, { fold: verdict.folded, tokensBefore: o.tokensBefore }, memory.tokens);
    const commit = await unlessTooLarge(commitMemory(deps, key, view, owner, memory, { fromFold: "PREPARED", retentionDays: o.retentionDays }));
    return { value: { memory, commit }, cleared: commit?.ok === true };
  });
  if (!leased.ok) return { ok: false, refusal: { kind: "lease", refusal: leased.refusal }, fold };
  const { memory, commit } = leased.value;
  if (commit === null) {
    // The summary's own fields grew past what one item holds: a fresh fold is prepared instead.
    await discard(deps, key, { fold: full, reason: SUMMARY_TOO_LARGE, outcome: "discarded" });
    return { ok: false, stale: true };
  }
  if (!commit.ok) {
    deps.log.warn("compaction commit conflict", { processId: key.processId, foldId: fold.id });
    return { ok: false, refusal: { kind: "commit_conflict" }, fold };
  }
  deps.metrics.preparedFold("used");
  const after = await afterCommit(deps, key, memory, { pendingArchive: commit.pendingArchive, before: view });
  return { ok: true, memory, view: after };
}
