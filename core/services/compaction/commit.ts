/**
 * The commit protocol (docs/compaction.md, "The commit protocol"): lease, summarize, one
 * transaction, roll forward. The summarizing step is ./fold-pipeline.ts, the writes are
 * ./transitions.ts. A failed summary writes a FAILED row and nothing else; every committed fold
 * ends with `afterCommit`, however it was produced.
 */
import { wireReason, type BudgetRefusal, type FoldRefusal } from "../../domain/fold/refusal.js";
import type { Memory, Message } from "../../domain/model.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ServiceDeps } from "../deps.js";
import { runFold, type FoldAsk } from "./fold-pipeline.js";
import { afterCommit, committing } from "./transitions.js";

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
  const producedBy = plan.producedBy ?? ("inline" as const);
  const run = await runFold(deps, key, view, base, plan, {
    // A manual compaction past its budget has queued the same fold for the worker and released its
    // lease; a lease this fold took only after that must not lead to a second summary.
    stillWanted: async () => (plan.abandoned?.aborted ? "abandoned" : null),
    ...committing(deps, key, view, { ...plan, producedBy, retentionDays: base.retentionDays }, (pending) => (pendingArchive = pending)),
  });
  if (!run.ok) return refused(run.refusal);
  const after = await afterCommit(deps, key, run.memory, { pendingArchive, before: view, manual: plan.manual });
  return { ok: true, memory: run.memory, view: after };
}
