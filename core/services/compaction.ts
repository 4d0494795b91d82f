/**
 * The sliding window (docs/compaction.md, "Modes and thresholds"): estimate the prompt, clear old
 * tool results first, pick the mode from the thresholds, select and fold through the commit
 * protocol (./commit.ts). Background turns use it through ./turn-compaction.ts.
 */
import type { CompactionModeName, CompactionResult } from "../domain/model.js";
import { sizeFold } from "../domain/fold-size.js";
import { modeForRatio, promptTokens, type PromptSize } from "../domain/mode.js";
import { resolveContextWindow, type ModelRef } from "../domain/model-windows.js";
import { replayTokens } from "../domain/replay.js";
import { selectForCompaction } from "../domain/selector.js";
import type { CompactionMetricMode } from "../ports/metrics.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { clearIfNeeded } from "./clearing.js";
import { foldAndCommit } from "./commit.js";
import type { ServiceDeps } from "./deps.js";
import type { BudgetRefusal } from "./model-budget.js";
import { settledView } from "./settle.js";
import { tagBeforeFold } from "./strength-tagging.js";

export interface CompactionRequest {
  model: ModelRef;
  prompt?: PromptSize;
  force?: Exclude<CompactionModeName, "NONE">;
  instructions?: string;
}

export interface FoldOptions {
  /** The lease owner token to use (a caller that may have to abandon the fold passes its own). */
  leaseOwner?: string;
  /** Aborted when the caller gave up on this fold: a lease taken after that is let go unused. */
  abandoned?: AbortSignal;
  /** Commit as this queued fold (same id, only while it is still QUEUED): the worker's manual job. */
  queuedFoldId?: string;
}

/** What {@link compactIfNeeded} answers: the result, the view after it, and why the budget refused it if it did. */
export type CompactionOutcome = CompactionResult & { view: ActiveView; budget?: BudgetRefusal };

/**
 * Estimate, clear, pick the mode from the thresholds, select, fold (docs/compaction.md). Answers
 * what happened; a failed summary is a FAILED row and `reason`, never a throw; over the tenant's
 * daily budget, `reason: "budget_exceeded"` and `budget`. `options.view` lets the turn path reuse
 * the active view it already read.
 *
 * @example
 * const r = await compactIfNeeded(deps, { tenantId, processId }, { model: { contextWindow: 128_000 }, prompt: { tokens: 110_000 } });
 * if (!r.compacted) console.log(r.reason);
 */
export async function compactIfNeeded(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  options: { view?: ActiveView } & FoldOptions = {},
): Promise<CompactionOutcome> {
  const contextWindow = resolveContextWindow(request.model);
  let view = await settledView(deps, key, options.view);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const tokensBefore = promptTokens(request.prompt, replayTokens(view)).tokens;
  // The cheap tier first: clearing old tool results needs no model call (a forced fold skips it).
  const clearing = request.force
    ? { view, clearedMessages: 0, tokensAfter: tokensBefore }
    : await clearIfNeeded(deps, key, view, tunables, contextWindow, tokensBefore);
  view = clearing.view;
  const own = replayTokens(view);
  const tokensNow = clearing.tokensAfter;
  const mode = request.force ?? modeForRatio(tokensNow / contextWindow, tunables);
  const unchanged = {
    mode,
    compacted: false,
    compactedMessages: 0,
    tokensBefore,
    tokensAfter: tokensNow,
    ...(clearing.clearedMessages > 0 ? { clearedMessages: clearing.clearedMessages } : {}),
    view,
  };
  if (mode === "NONE") return unchanged;

  const tagging = await tagBeforeFold(deps, key, view, tunables, mode);
  view = tagging.view;
  const selection = selectForCompaction(view.messages, mode, tunables);
  if (selection.fold.length === 0) return { ...unchanged, reason: selection.reason ?? "nothing_eligible" };
  // SOFT is optional hygiene: folding a few acknowledgements would cost a summary call and a
  // prompt-cache reset to save nothing, so it waits until the fold holds `softMinFoldTokens`.
  const foldTokens = selection.fold.reduce((n, m) => n + m.tokens, 0);
  if (mode === "SOFT" && !request.force && foldTokens < tunables.softMinFoldTokens) {
    return { ...unchanged, reason: "below_min_saving" };
  }

  const fold = sizeFold(selection.fold, mode, tunables, { contextWindow, own, tokensBefore: tokensNow });

  const outcome = await foldAndCommit(deps, key, view, tunables, {
    fold,
    metricMode: mode.toLowerCase() as CompactionMetricMode,
    eventMode: mode,
    instructions: request.instructions,
    tokensBefore: tokensNow,
    contextWindow,
    ...(tagging.strengthAnalyzer ? { metadata: { strengthAnalyzer: tagging.strengthAnalyzer } } : {}),
    ...(options.leaseOwner ? { owner: options.leaseOwner } : {}),
    ...(options.abandoned ? { abandoned: options.abandoned } : {}),
    ...(options.queuedFoldId ? { memoryId: options.queuedFoldId, fromFold: "QUEUED" as const, producedBy: "worker" as const } : {}),
    // After an undo the same fold waits until the replay grew by the minimum saving; a manual
    // compaction and EMERGENCY (the prompt must never overflow) do not wait (docs/compaction.md).
    ...(request.force || mode === "EMERGENCY" ? {} : { holdCheckTokens: own }),
  });
  if (!outcome.ok) {
    return {
      ...unchanged,
      reason: outcome.reason,
      ...(outcome.memoryId ? { memoryId: outcome.memoryId } : {}),
      ...(outcome.budget ? { budget: outcome.budget } : {}),
    };
  }
  const tokensAfter = outcome.memory.metadata.tokensAfter ?? tokensNow;
  return {
    ...unchanged,
    compacted: true,
    memoryId: outcome.memory.id,
    compactedMessages: outcome.memory.sourceRefs.length,
    tokensAfter,
    view: outcome.view,
  };
}
