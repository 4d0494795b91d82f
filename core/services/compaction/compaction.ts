/**
 * The sliding window (docs/compaction.md, "Modes and thresholds"): estimate the prompt, clear old
 * tool results first, pick the mode from the thresholds ({@link assess}, where every compaction
 * path starts), plan the fold (../domain/fold-plan.ts) and fold through the commit protocol
 * (./commit.ts). Background turns use it through ./turn-compaction.ts.
 */
import { planFold } from "../../domain/fold-plan.js";
import type { FoldRefusal } from "../../domain/fold/refusal.js";
import type { CompactionModeName } from "../../domain/model.js";
import type { CompactionResult } from "../../domain/compaction-result.js";
import { modeForRatio, promptTokens, type PromptSize } from "../../domain/mode.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import { cappedWindow, foldRulesFor, resolveModelWindow, type ModelRef } from "../../domain/model-windows.js";
import { replayTokens } from "../../domain/replay.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { clearIfNeeded } from "./clearing.js";
import { foldAndCommit } from "./commit.js";
import type { ServiceDeps } from "../deps.js";
import type { BudgetRefusal } from "../../domain/fold/refusal.js";
import { settledView } from "./settle.js";
import { tagBeforeFold } from "../strength-tagging.js";
import { foldReport } from "../../domain/fold/lifecycle.js";
import type { FoldUnit } from "../../domain/tool-groups.js";

export interface CompactionRequest {
  model: ModelRef;
  prompt?: PromptSize;
  force?: FoldModeName;
  instructions?: string;
}

export interface FoldOptions {
  /** The lease owner token to use (a caller that may have to abandon the fold passes its own). */
  leaseOwner?: string;
  /** Aborted when the caller gave up on this fold: a lease taken after that is let go unused. */
  abandoned?: AbortSignal;
  /** Commit as this queued fold (same id, only while it is still QUEUED): the worker's manual job. */
  queuedFoldId?: string;
  /** A `POST .../compaction` request: its fold is logged as `manual` (docs/operations.md, "What the service reports"). */
  manual?: boolean;
}

/** What {@link compactIfNeeded} answers: the result, the view after it, and why the budget refused it if it did. */
export type CompactionOutcome = CompactionResult & { view: ActiveView; budget?: BudgetRefusal };

/**
 * What a caller already knows of the turn, so that one turn settles the view, resolves the window
 * and loads the tunables once.
 */
export interface Known {
  view?: ActiveView;
  tunables?: Tunables;
  contextWindow?: number;
  /** What a fold keeps whole when the request names no model (a queued fold's `metadata.foldUnit`). */
  foldUnit?: FoldUnit | undefined;
}

/** Where a compaction starts from: the settled view, the window, the tunables, the prompt and the mode. */
export interface Assessment {
  view: ActiveView;
  tunables: Tunables;
  contextWindow: number;
  /** The prompt as asked (caller's unit). */
  tokensBefore: number;
  /** The prompt after clearing old tool results (caller's unit). */
  tokensNow: number;
  /** Our own estimate of the replay after clearing. */
  own: number;
  clearedMessages: number;
  mode: CompactionModeName;
  /** What a fold keeps whole, by the chat model's fold rules (docs/turns.md, "What a fold may keep"). */
  foldUnit: FoldUnit;
}

/**
 * Resolve the window, settle the view, load the tunables, estimate the prompt, clear old tool
 * results (the cheap tier: no model call; a forced fold skips it) and pick the mode from the
 * thresholds (docs/compaction.md, "Modes and thresholds"), and read the model's fold rules. Every
 * compaction path starts here.
 */
export async function assess(deps: ServiceDeps, key: ProcessKey, request: CompactionRequest, known: Known = {}): Promise<Assessment> {
  const model = known.contextWindow === undefined ? resolveModelWindow(request.model) : undefined;
  const settled = await settledView(deps, key, known.view);
  const tunables = known.tunables ?? (await deps.tunables.forProcess(key.tenantId, settled.state.process.projectId));
  const contextWindow = known.contextWindow ?? cappedWindow(model!, tunables.maxPromptTokens).tokens;
  const tokensBefore = promptTokens(request.prompt, replayTokens(settled)).tokens;
  const clearing = request.force
    ? { view: settled, clearedMessages: 0, tokensAfter: tokensBefore }
    : await clearIfNeeded(deps, key, settled, tunables, contextWindow, tokensBefore);
  const tokensNow = clearing.tokensAfter;
  return {
    view: clearing.view,
    tunables,
    contextWindow,
    tokensBefore,
    tokensNow,
    own: replayTokens(clearing.view),
    clearedMessages: clearing.clearedMessages,
    mode: request.force ?? modeForRatio(tokensNow / contextWindow, tunables),
    foldUnit: request.model.name !== undefined ? foldRulesFor(request.model.name).foldUnit : (known.foldUnit ?? "tool_group"),
  };
}

/**
 * Estimate, clear, pick the mode from the thresholds, plan, fold (docs/compaction.md). Answers
 * what happened; a failed summary is a FAILED row and `reason`, never a throw; over the tenant's
 * daily budget, `reason: "budget_exceeded"` and `budget`. `options` lets the turn path reuse what
 * it already read (the view, the tunables, the window, or the whole {@link Assessment}).
 *
 * @example
 * const r = await compactIfNeeded(deps, { tenantId, processId }, { model: { contextWindow: 128_000 }, prompt: { tokens: 110_000 } });
 * if (!r.compacted) console.log(r.reason);
 */
export async function compactIfNeeded(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  options: Known & FoldOptions & { assessed?: Assessment } = {},
): Promise<CompactionOutcome> {
  const { refusal: _refusal, ...outcome } = await foldIfNeeded(deps, key, request, options);
  return outcome;
}

/** {@link compactIfNeeded}, with the typed refusal of a fold that did not land (for the worker, never on the wire). */
export async function foldIfNeeded(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  options: Known & FoldOptions & { assessed?: Assessment } = {},
): Promise<CompactionOutcome & { refusal?: FoldRefusal }> {
  const { tunables, contextWindow, tokensBefore, tokensNow, own, clearedMessages, mode, foldUnit, ...at } = options.assessed ?? (await assess(deps, key, request, options));
  let view = at.view;
  const unchanged = {
    mode,
    compacted: false,
    compactedMessages: 0,
    tokensBefore,
    tokensAfter: tokensNow,
    ...(clearedMessages > 0 ? { clearedMessages } : {}),
    view,
  };
  if (mode === "NONE") return unchanged;

  const tagging = await tagBeforeFold(deps, key, view, tunables, mode);
  view = tagging.view;
  const plan = planFold(view.messages, mode, tunables, { contextWindow, own, tokensBefore: tokensNow, minSaving: true, forced: request.force !== undefined, unit: foldUnit });
  if (!plan.ok) return { ...unchanged, reason: plan.reason };

  const outcome = await foldAndCommit(deps, key, view, tunables, {
    fold: plan.fold,
    mode,
    instructions: request.instructions,
    tokensBefore: tokensNow,
    contextWindow,
    ...(tagging.strengthAnalyzer ? { metadata: { strengthAnalyzer: tagging.strengthAnalyzer } } : {}),
    ...(options.leaseOwner ? { owner: options.leaseOwner } : {}),
    ...(options.abandoned ? { abandoned: options.abandoned } : {}),
    ...(options.manual ? { manual: true } : {}),
    ...(options.queuedFoldId ? { memoryId: options.queuedFoldId, fromFold: "QUEUED" as const, producedBy: "worker" as const } : {}),
    // After an undo the same fold waits until the replay grew by the minimum saving; a manual
    // compaction and a mode that does not honour the hold (EMERGENCY) do not wait (docs/compaction.md).
    ...(plan.holdCheckTokens !== undefined ? { holdCheckTokens: plan.holdCheckTokens } : {}),
  });
  if (!outcome.ok) {
    return {
      ...unchanged,
      refusal: outcome.refusal,
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
    fold: foldReport(outcome.memory),
    view: outcome.view,
  };
}
