/**
 * The turn's compaction step (docs/compaction.md, "What a turn does"). Inline: the sliding window
 * as is. Background: no turn calls a summarizer; it asks the worker to commit a prepared fold that
 * is due (at EMERGENCY commits it itself), queues the fold the prompt needs early enough for it to
 * be ready in time, and trims its answer while the fold is on its way.
 */
import { commitsPrepared, foldDue, heldAfterUndo, planFold } from "../../domain/fold-plan.js";
import { asFold, type LiveFold } from "../../domain/fold/lifecycle.js";
import { wireReason } from "../../domain/fold/refusal.js";
import { judgeFolds } from "../../domain/fold/usability.js";
import type { Message } from "../../domain/model.js";
import type { CompactionResult } from "../../domain/compaction-result.js";
import { policyOf, type FoldModeName } from "../../domain/mode-policy.js";
import { replayTokens } from "../../domain/replay.js";
import { trimBlock, trimLimit, trimToFit } from "../../domain/trim.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { assess, compactIfNeeded, type CompactionRequest, type Known } from "./compaction.js";
import type { ServiceDeps } from "../deps.js";
import { discard, queueFold } from "./transitions.js";
import type { FoldUnit } from "../../domain/tool-groups.js";
import { BUDGET_EXCEEDED, budgetRefusal } from "./model-budget.js";
import { foldWanted } from "./fold-ahead.js";
import { commitPrepared } from "./prepared-commit.js";
import { requestCommit } from "./worker-commit.js";

/** The compaction result, the view after it, the messages to answer with and their prompt size (caller's unit). */
export type TurnCompaction = CompactionResult & { view: ActiveView; messages: Message[]; answerTokens: number };

/**
 * The answer while no fold lands (queued, or refused by the budget): the oldest foldable messages
 * left out of it, never out of the history, until the prompt is below the emergency threshold, in
 * whole blocks so that the cut stays put from turn to turn. `scale`: the caller's tokens per token
 * of our own estimate.
 */
function trimmedAnswer(view: ActiveView, tunables: Tunables, contextWindow: number, tokensNow: number, scale: number, unit: FoldUnit) {
  const own = replayTokens(view);
  const limit = trimLimit(tunables, contextWindow);
  return trimToFit(view.messages, tunables, { tokens: tokensNow, limit, scale, own, block: trimBlock(tunables, contextWindow), unit });
}

/**
 * The turn's compaction step. Inline: {@link compactIfNeeded} as is, its answer trimmed when the
 * tenant's daily budget refused the fold. Background: have a due prepared fold committed (by the
 * worker; at EMERGENCY here, with no model call, so also over the budget), queue the fold the
 * prompt needs when none is prepared and the
 * budget is not used up, and trim the answer below the emergency threshold while the fold is not
 * ready.
 */
export async function compactForTurn(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  known: Known = {},
): Promise<TurnCompaction> {
  const assessed = await assess(deps, key, request, known);
  const { tunables, contextWindow, own, mode, foldUnit } = assessed;
  if (deps.compaction.execution === "inline") {
    const { budget, ...out } = await compactIfNeeded(deps, key, request, { assessed });
    if (!budget) return { ...out, messages: out.view.messages, answerTokens: out.tokensAfter };
    const ownAfter = replayTokens(out.view);
    const trim = trimmedAnswer(out.view, tunables, contextWindow, out.tokensAfter, ownAfter > 0 ? out.tokensAfter / ownAfter : 1, foldUnit);
    return { ...out, ...(trim.trimmed.messages > 0 ? { trimmed: trim.trimmed } : {}), messages: trim.kept, answerTokens: trim.tokens };
  }
  let view = assessed.view;
  const tokensBefore = assessed.tokensNow;
  const scale = own > 0 ? tokensBefore / own : 1;
  let result: CompactionResult = {
    mode,
    compacted: false,
    compactedMessages: 0,
    tokensBefore: assessed.tokensBefore,
    tokensAfter: tokensBefore,
    ...(assessed.clearedMessages > 0 ? { clearedMessages: assessed.clearedMessages } : {}),
  };
  let live = await settleFolds(deps, key, view);
  if (mode === "NONE") return { ...result, view, messages: view.messages, answerTokens: tokensBefore };
  // After an undo, a mode that honours the hold (SOFT, HARD) waits until the replay grew past it
  // (docs/compaction.md, "Undoing a compaction"): the turn reads it on META, so it neither commits
  // a prepared fold nor queues one the worker would only discard. EMERGENCY never waits.
  const held = (m: FoldModeName) => heldAfterUndo(m, own, view.state.revertHoldTokens);

  // A prepared fold is committed when its threshold is reached (a SOFT one already at SOFT): by
  // the worker, asked here, so that no turn pays for the commit transaction; at EMERGENCY by the
  // turn itself, which must not wait (docs/compaction.md, "Who commits a prepared fold").
  const due = live?.status === "PREPARED" && !held(mode) && commitsPrepared(mode, live.mode);
  if (live?.status === "PREPARED" && due && !policyOf(mode).commitsPreparedInTurn) {
    await requestCommit(deps, key, live, { mode, promptTokens: tokensBefore });
  } else if (live?.status === "PREPARED" && due) {
    const outcome = await commitPrepared(deps, key, view, live, { mode, tokensBefore, retentionDays: tunables.retentionDays });
    live = null;
    if (outcome.ok) {
      view = outcome.view;
      result = {
        ...result,
        mode,
        compacted: true,
        memoryId: outcome.memory.id,
        compactedMessages: outcome.memory.sourceRefs.length,
        tokensBefore,
        tokensAfter: outcome.memory.metadata.tokensAfter ?? tokensBefore,
      };
    } else if ("fold" in outcome) {
      result.reason = wireReason(outcome.refusal);
      live = outcome.fold;
    }
  }

  // What the prompt needs now: queue it unless a fold is already on its way.
  const tokensNow = result.compacted ? result.tokensAfter : tokensBefore;
  // HARD is queued early enough to be prepared before it is due (docs/compaction.md, "When a fold is prepared").
  const wanted = foldWanted(deps, view, tunables, { tokens: tokensNow, scale, contextWindow });
  if (wanted && !result.compacted && held(wanted)) {
    result.reason = "reverted_recently";
  } else if (wanted && !live) {
    // Only whether a fold is worth queuing: the worker plans what it takes when it runs.
    const plan = planFold(view.messages, wanted, tunables, { contextWindow: undefined, own, tokensBefore: tokensNow, minSaving: true, unit: foldUnit });
    // Over the tenant's daily budget the worker could only drop the fold: nothing is queued.
    const refused = plan.ok && (await budgetRefusal(deps, key.tenantId)) !== null;
    if (refused) {
      if (!result.compacted) result.reason = BUDGET_EXCEEDED;
    } else if (plan.ok) {
      // The fold carries the model's rule, so that the worker that prepares it keeps to it.
      live = asFold(await queueFold(deps, key, view, { mode: wanted, job: "prepare", contextWindow, tokensBefore: tokensNow, foldUnit })) as LiveFold;
    } else if (!result.compacted && !result.reason) {
      result.reason = plan.reason;
    }
  }
  if (!result.compacted && !result.reason && live) {
    const due = foldDue(tokensNow / contextWindow, live.mode === "RANGE" ? "HARD" : live.mode, tunables);
    result.reason = live.status === "QUEUED" || due ? "compaction_queued" : "compaction_prepared";
    result.memoryId = live.id;
  }

  // Until the fold lands, the answer (never the history) stays below the emergency threshold.
  const trim = trimmedAnswer(view, tunables, contextWindow, tokensNow, scale, foldUnit);
  if (trim.trimmed.messages > 0) result.trimmed = trim.trimmed;
  return { ...result, view, messages: trim.kept, answerTokens: trim.tokens };
}

/**
 * Discards the folds that can no longer be used (domain/fold/usability.ts, `judgeFolds`) and
 * returns the fold the turn waits for or commits, if any. A queued manual compaction comes first:
 * the turn gives way to it and keeps the automatic fold, which is still committed if the manual
 * job ends without a commit, and is discarded as stale once it does commit (docs/compaction.md,
 * "What a turn does").
 */
async function settleFolds(deps: ServiceDeps, key: ProcessKey, view: ActiveView): Promise<LiveFold | null> {
  const { live, discard: unusable } = judgeFolds(view, deps.clock.now().getTime(), deps.compaction.queueTimeoutMs);
  for (const d of unusable) await discard(deps, key, d);
  return live;
}
