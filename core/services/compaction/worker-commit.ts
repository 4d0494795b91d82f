/**
 * The worker commits a prepared fold that is due (docs/compaction.md, "Who commits a prepared
 * fold"): a turn that finds one due below EMERGENCY asks for it (`CompactionRequested`, job
 * `commit`) and answers the current view, so no turn pays for the commit transaction. The commit
 * is the same protocol as a turn's (services/prepared-commit.ts): once, whoever comes first, and a
 * request that arrives late finds the fold OK, or discards it as stale.
 */
import { conflict } from "../../domain/errors.js";
import { domainEvent, type EventDetail } from "../../domain/events.js";
import { heldAfterUndo, planFold } from "../../domain/fold-plan.js";
import type { LiveFold } from "../../domain/fold/lifecycle.js";
import { retryHelps, wireReason } from "../../domain/fold/refusal.js";
import type { Memory } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import { replayTokens } from "../../domain/replay.js";
import { publishSafely } from "../../ports/events.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { nextFoldDue } from "./fold-ahead.js";
import { extendIfShort } from "./fold-extension.js";
import { foldForJob } from "./fold-queue.js";
import { queueFold } from "./transitions.js";
import { budgetRefusal } from "./model-budget.js";
import { commitPrepared } from "./prepared-commit.js";
import { AGAIN, retrying } from "./lease.js";
import { settledView } from "./settle.js";

export type CommitOutcome = { done: "committed"; foldId: string; compactedMessages: number; next?: string } | { skipped: string; foldId: string };

/** Asks the worker to commit a PREPARED fold; a lost request only leaves the fold for the next turn. */
export async function requestCommit(deps: ServiceDeps, key: ProcessKey, fold: LiveFold, o: { mode: FoldModeName; promptTokens: number }) {
  await publishSafely(
    deps,
    domainEvent("CompactionRequested", { tenantId: key.tenantId, processId: key.processId, foldId: fold.id, mode: o.mode, job: "commit", promptTokens: o.promptTokens }),
  );
}

/** How a worker job waits for another holder's lease: every 250 ms, for `leaseWaitMs` in all. */
export const leaseWait = (deps: ServiceDeps) => ({ attempts: Math.floor(deps.compaction.leaseWaitMs / 250) + 1, waitMs: () => 250, withinMs: deps.compaction.leaseWaitMs });

/**
 * A `commit` job: commits the fold if it is still PREPARED and still fits the state the worker
 * reads (the checks of a turn's commit); anything else ends the job (a fold OK or DISCARDED
 * already, stale, or held by an undo). Waits for another holder's lease like any job, then fails
 * the delivery so it is retried. A fold that would leave the prompt at or above the mode's
 * threshold is first extended by the messages appended since (services/fold-extension.ts). After
 * the commit, queues the next fold at once when it will be needed within one prepare latency.
 */
export async function commitWhenDue(deps: ServiceDeps, detail: EventDetail<"CompactionRequested">): Promise<CommitOutcome> {
  const { tenantId, processId, foldId } = detail;
  const key = { tenantId, processId };
  let extendTried = false;
  const again = () => conflict("compaction.retry_later", `process '${processId}' is being compacted; deliver the commit of fold '${foldId}' again`);
  const attempt = async (): Promise<CommitOutcome | typeof AGAIN> => {
    const job = await foldForJob(deps, key, foldId, "PREPARED");
    if (!("fold" in job)) return job;
    const { fold } = job;
    const view = await settledView(deps, key);
    const mode = detail.mode !== undefined && detail.mode !== "RANGE" ? detail.mode : fold.mode;
    const own = replayTokens(view);
    // After an undo a SOFT or HARD fold waits until the replay grew past the hold (docs/compaction.md, "Undoing a compaction").
    if (heldAfterUndo(mode, own, view.state.revertHoldTokens)) return { skipped: "reverted_recently", foldId };
    const tokensBefore = detail.promptTokens ?? own;
    // A fold that covers too little is extended once, then read again and committed; a failed
    // extension leaves it as it was, committed as it is (docs/compaction.md, "Who commits a prepared fold").
    if (!extendTried) {
      extendTried = true;
      if ((await extendIfShort(deps, key, view, fold, { mode, tokensBefore })).ok) return attempt();
    }
    const { retentionDays } = await deps.tunables.forProcess(tenantId, view.state.process.projectId);
    const out = await commitPrepared(deps, key, view, fold, { mode, tokensBefore, producedBy: "worker", retentionDays });
    if (out.ok) {
      const next = await queueNextIfDue(deps, key, out.view, out.memory, { tokensAfter: out.memory.metadata.tokensAfter ?? tokensBefore, scale: own > 0 ? tokensBefore / own : 1 });
      return { done: "committed", foldId, compactedMessages: out.memory.sourceRefs.length, ...(next ? { next: next.id } : {}) };
    }
    if ("stale" in out) return { skipped: "stale", foldId };
    // Another holder is compacting, or committed since our read: read again after a wait.
    return retryHelps(out.refusal) ? AGAIN : { skipped: wireReason(out.refusal), foldId };
  };
  return retrying(deps, leaseWait(deps), attempt, again);
}

/**
 * Prepares the next fold while this one commits: when the prompt after the commit plus its growth
 * over one prepare latency reaches hardThreshold, a HARD fold (EMERGENCY if the prompt is still
 * there) is queued at the new META version now rather than by a later turn (docs/compaction.md,
 * "When a fold is prepared").
 */
async function queueNextIfDue(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  committed: Memory,
  o: { tokensAfter: number; scale: number },
): Promise<Memory | null> {
  const contextWindow = committed.metadata.contextWindow;
  if (!contextWindow || view.folds.some((f) => f.metadata.job !== "range")) return null;
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  if (!nextFoldDue(deps, view, tunables, { tokens: o.tokensAfter, scale: o.scale, contextWindow })) return null;
  const wanted = o.tokensAfter / contextWindow >= tunables.emergencyThreshold ? "EMERGENCY" : "HARD";
  const own = replayTokens(view);
  // The next fold keeps to the rule the committed one was queued with.
  const foldUnit = committed.metadata.foldUnit;
  const plan = planFold(view.messages, wanted, tunables, { contextWindow: undefined, own, tokensBefore: o.tokensAfter, minSaving: true, unit: foldUnit });
  if (!plan.ok || (await budgetRefusal(deps, key.tenantId)) !== null) return null;
  return queueFold(deps, key, view, { mode: wanted, job: "prepare", contextWindow, tokensBefore: o.tokensAfter, ...(foldUnit ? { foldUnit } : {}) });
}
