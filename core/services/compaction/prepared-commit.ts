/**
 * Committing a PREPARED fold in a turn (docs/compaction.md, "What a turn does"): the commit
 * protocol without the summarizer step, only if the fold still fits the state it meets.
 */
import { asFold, type PreparedFold } from "../../domain/fold/lifecycle.js";
import { SUMMARY_TOO_LARGE, type FoldRefusal } from "../../domain/fold/refusal.js";
import { canCommit } from "../../domain/fold/usability.js";
import type { Memory } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { commitFromPrepared, discard } from "./transitions.js";

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
  const written = await commitFromPrepared(deps, key, view, full, { ...o, folded: verdict.folded, producedBy: o.producedBy ?? "prepared" });
  if (written.ok) return written;
  if ("tooLarge" in written) {
    // The summary's own fields grew past what one item holds: a fresh fold is prepared instead.
    await discard(deps, key, { fold: full, reason: SUMMARY_TOO_LARGE, outcome: "discarded" });
    return { ok: false, stale: true };
  }
  const refusal: FoldRefusal = "lease" in written ? { kind: "lease", refusal: written.lease } : { kind: "commit_conflict" };
  return { ok: false, refusal, fold };
}
