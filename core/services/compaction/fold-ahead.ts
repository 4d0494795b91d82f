/**
 * How far ahead a fold is prepared (docs/compaction.md, "When a fold is prepared"): the share of
 * the window the prompt is expected to grow by while the worker prepares a fold, from the view the
 * caller already read (no extra read or write), and whether a required fold is wanted now.
 */
import { wantedFold } from "../../domain/fold-size.js";
import type { Message } from "../../domain/model.js";
import { foldWithinCallCap } from "../../domain/summary-plan.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import { growthPerMs, observedPrepareMs, prepareLead } from "../../domain/prepare-lead.js";
import { newestSummary } from "../../domain/replay.js";
import type { FoldUnit } from "../../domain/tool-groups.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";

/** The expected growth (share of the window) over one prepare, measured on `view`. `scale`: caller tokens per token of ours. */
export function leadOf(deps: Pick<ServiceDeps, "clock">, view: ActiveView, o: { scale: number; contextWindow: number }): number {
  return prepareLead({
    growthPerMs: growthPerMs(view.messages, deps.clock.now().getTime()),
    prepareMs: observedPrepareMs(newestSummary(view)),
    scale: o.scale,
    contextWindow: o.contextWindow,
  });
}

/** The fold to queue for a prompt of `tokens` (caller's units): the ladder's queue rungs, HARD moved ahead by the lead. */
export function foldWanted(
  deps: Pick<ServiceDeps, "clock">,
  view: ActiveView,
  tunables: Tunables,
  o: { tokens: number; scale: number; contextWindow: number },
): FoldModeName | null {
  return wantedFold(o.tokens / o.contextWindow, tunables, leadOf(deps, view, o));
}

/**
 * Whether the next HARD fold should be queued right after a commit: the prompt after it plus the
 * growth over one prepare reaches hardThreshold. softThreshold is no floor here: the measurement
 * says the fold will be due within one prepare, so it is not paid for early (docs/compaction.md,
 * "When a fold is prepared"). Never when prepareThreshold is at or above hardThreshold.
 */
export function nextFoldDue(deps: Pick<ServiceDeps, "clock">, view: ActiveView, tunables: Tunables, o: { tokens: number; scale: number; contextWindow: number }): boolean {
  if (tunables.prepareThreshold >= tunables.hardThreshold) return false;
  return o.tokens / o.contextWindow + leadOf(deps, view, o) >= tunables.hardThreshold;
}

/**
 * What a prepare job summarizes: the planned fold, or only its oldest part that one summarizer call
 * holds when the prompt plus the growth over two prepares reaches the emergency threshold. A fold
 * larger than one call takes two rounds (the chunks at once, then the merge), so it would be ready
 * too late for a process that grows this fast; the rest stays active for the next fold, which the
 * worker queues when it commits this one (docs/compaction.md, "When a fold is prepared").
 */
export function foldReadyInTime<M extends Message>(
  deps: Pick<ServiceDeps, "clock">,
  view: ActiveView,
  tunables: Tunables,
  fold: readonly M[],
  o: { tokens: number; scale: number; contextWindow: number | undefined; unit?: FoldUnit | undefined },
): M[] {
  if (!o.contextWindow) return [...fold];
  const oneCall = foldWithinCallCap(fold, tunables.maxSourceChars, { ...tunables, maxSummarizerCalls: 2 }, o.unit);
  if (!oneCall.cut || oneCall.fold.length === 0) return [...fold];
  const lead = leadOf(deps, view, { scale: o.scale, contextWindow: o.contextWindow });
  return o.tokens / o.contextWindow + 2 * lead >= tunables.emergencyThreshold ? oneCall.fold : [...fold];
}
