/**
 * How far ahead a fold is prepared (docs/compaction.md, "When a fold is prepared"): the share of
 * the window the prompt is expected to grow by while the worker prepares a fold, from the view the
 * caller already read (no extra read or write), and whether a required fold is wanted now.
 */
import { wantedFold } from "../domain/fold-size.js";
import type { FoldModeName } from "../domain/mode-policy.js";
import { growthPerMs, observedPrepareMs, prepareLead } from "../domain/prepare-lead.js";
import { newestSummary } from "../domain/replay.js";
import type { Tunables } from "../domain/tunables.js";
import type { ActiveView } from "../ports/store.js";
import type { ServiceDeps } from "./deps.js";

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
