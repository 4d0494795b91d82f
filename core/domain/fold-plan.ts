/**
 * Planning a fold (docs/compaction.md, "Modes and thresholds" and "What is folded"): from the
 * active messages, the mode, the tunables and the model window to what to fold, or why not. Pure:
 * every path that folds automatically (a turn inline, a turn queuing, the worker preparing)
 * plans with it and differs only in where it writes.
 */
import { sizeFold } from "./fold-size.js";
import type { Message } from "./model.js";
import { climb, minFoldTokens, MODE_POLICY, type FoldModeName } from "./mode-policy.js";
import { selectForCompaction } from "./selector.js";
import type { FoldUnit } from "./tool-groups.js";
import type { Tunables } from "./tunables.js";

export type PlannedFold<M> =
  | {
      ok: true;
      /** The messages to summarize, oldest first. */
      fold: M[];
      /** Our tokens of the whole selection (before the fold target cut it). */
      selectedTokens: number;
      /** Own replay tokens the lease checks against a revert hold; absent when the fold does not wait. */
      holdCheckTokens?: number;
    }
  | { ok: false; reason: string };

const tokensOf = (messages: readonly { tokens: number }[]) => messages.reduce((n, m) => n + m.tokens, 0);

/**
 * What a fold in `mode` takes: the selection, refused below the mode's minimum saving (an
 * optional mode's gate, the same whether the fold is summarized now or queued for the worker;
 * `minSaving: false` once the gate was passed), cut to the fold target where the mode uses it.
 * A forced fold (manual compaction) skips the gate and the revert hold. `unit`: what the fold keeps
 * whole, by the chat model's fold rules (`foldRulesFor`; a queued fold carries it as
 * `metadata.foldUnit`).
 *
 * @param own our own estimate of the whole replay
 * @param tokensBefore the prompt size in the caller's unit
 */
export function planFold<M extends Message>(
  messages: readonly M[],
  mode: FoldModeName,
  tunables: Tunables,
  o: { contextWindow: number | undefined; own: number; tokensBefore: number; minSaving: boolean; forced?: boolean; unit?: FoldUnit | undefined },
): PlannedFold<M> {
  const selection = selectForCompaction(messages, mode, tunables, o.unit);
  if (selection.fold.length === 0) return { ok: false, reason: selection.reason ?? "nothing_eligible" };
  const selectedTokens = tokensOf(selection.fold);
  // An optional fold (SOFT) is hygiene: a few acknowledgements would cost a summary call and a
  // prompt-cache reset to save nothing, so it waits until the fold is worth it.
  if (!o.forced && o.minSaving && selectedTokens < minFoldTokens(mode, tunables)) {
    return { ok: false, reason: "below_min_saving" };
  }
  const fold = sizeFold(selection.fold, mode, tunables, { ...o, unit: o.unit ?? "tool_group" });
  const waits = !o.forced && MODE_POLICY[mode].honoursRevertHold;
  return { ok: true, fold, selectedTokens, ...(waits ? { holdCheckTokens: o.own } : {}) };
}

/**
 * After an undo, an automatic fold in `mode` waits until the replay grew past the hold the undo
 * left on META (docs/compaction.md, "Undoing a compaction").
 */
export function heldAfterUndo(mode: FoldModeName, own: number, revertHoldTokens: number | undefined): boolean {
  return MODE_POLICY[mode].honoursRevertHold && own < (revertHoldTokens ?? 0);
}

/** Whether a turn in `mode` commits a fold prepared for `preparedFor`: an optional mode only its own. */
export function commitsPrepared(mode: FoldModeName, preparedFor: FoldModeName): boolean {
  return !MODE_POLICY[mode].optional || preparedFor === mode;
}

/**
 * Whether a waiting fold is due (`compaction_queued`) rather than merely prepared ahead
 * (`compaction_prepared`): an optional mode's fold always is; a required one once the prompt
 * reached a required mode's threshold.
 */
export function foldDue(ratio: number, preparedFor: FoldModeName, tunables: Tunables): boolean {
  if (MODE_POLICY[preparedFor].optional) return true;
  return climb(ratio, (p) => (p.optional ? Number.POSITIVE_INFINITY : p.threshold(tunables))) !== null;
}
