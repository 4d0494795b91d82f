/**
 * How much a fold should take and what it leaves (docs/compaction.md, "Modes and thresholds" and
 * "Off the turn's critical path"). Pure: token arithmetic over the replay and the tunables.
 */
import type { CompactionModeName, Memory, Message } from "./model.js";
import { climb, MODE_POLICY, type FoldModeName } from "./mode-policy.js";
import { replayTokens } from "./replay.js";
import { foldOldestUntil, type SelectableMessage } from "./selector.js";
import { withSummaryBudget } from "./summarizer-fit.js";
import type { FoldUnit } from "./tool-groups.js";
import type { Tunables } from "./tunables.js";

/**
 * The prompt size (caller's units) a fold with `foldTarget` aims for: that share of the window, but
 * at least `foldMinRoomTokens` below the hard threshold, so that on a small window a fold is not
 * repeated every few turns and recall keeps room. 0 when the window has no such room: fold all.
 */
export function foldTargetTokens(
  tunables: Pick<Tunables, "foldTarget"> & Partial<Pick<Tunables, "hardThreshold" | "foldMinRoomTokens">>,
  contextWindow: number,
): number {
  const share = tunables.foldTarget * contextWindow;
  if (tunables.hardThreshold === undefined || !tunables.foldMinRoomTokens) return share;
  return Math.max(0, Math.min(share, tunables.hardThreshold * contextWindow - tunables.foldMinRoomTokens));
}

/**
 * Our tokens to fold so that the prompt lands at {@link foldTargetTokens}, counting the summary
 * that replaces them. The caller's count is converted to our units first.
 */
export function tokensToReachTarget(
  tunables: Pick<Tunables, "foldTarget" | "summaryMaxTokens"> & Partial<Pick<Tunables, "hardThreshold" | "foldMinRoomTokens">>,
  contextWindow: number, own: number, tokensBefore: number): number {
  const toOwn = tokensBefore > 0 ? own / tokensBefore : 1;
  const target = foldTargetTokens(tunables, contextWindow) * toOwn;
  return own - target + tunables.summaryMaxTokens;
}

export type FoldSizeTunables = Pick<
  Tunables,
  "foldTarget" | "summaryMinTokens" | "summaryMaxTokens" | "summaryWindowShare" | "hardThreshold" | "foldMinRoomTokens"
>;

/**
 * What a fold takes of its selection (the `foldTarget` tunable, docs/configuration.md "Tunables"):
 * with a fold target, a fold whose mode uses it (HARD, EMERGENCY) that knows the model's window takes only the oldest
 * messages that bring the prompt to {@link foldTargetTokens}, never splitting a tool group (nor a
 * turn, with `unit: "turn"`); any other fold takes the whole selection.
 *
 * @param own our own estimate of the whole replay
 * @param tokensBefore the prompt size in the caller's unit
 */
export function sizeFold<M extends SelectableMessage & { tokens: number }>(
  selection: readonly M[],
  mode: CompactionModeName,
  tunables: FoldSizeTunables,
  o: { contextWindow: number | undefined; own: number; tokensBefore: number; unit?: FoldUnit },
): M[] {
  if (!(tunables.foldTarget > 0) || mode === "NONE" || !MODE_POLICY[mode].usesFoldTarget || !o.contextWindow) return [...selection];
  const toFree = tokensToReachTarget(withSummaryBudget(tunables, o.contextWindow), o.contextWindow, o.own, o.tokensBefore);
  return foldOldestUntil(selection, toFree, o.unit);
}

/**
 * The fold the prompt needs at `ratio` (the ladder's queue rungs): HARD once `ratio + lead` reaches
 * hardThreshold (at the latest from prepareThreshold, at the earliest from softThreshold), SOFT
 * below that. `lead`: the expected growth while a fold is prepared (domain/prepare-lead.ts).
 */
export function wantedFold(
  ratio: number,
  t: Pick<Tunables, "emergencyThreshold" | "prepareThreshold" | "hardThreshold" | "softThreshold">,
  lead = 0,
): FoldModeName | null {
  return climb(ratio, (p) => p.queuedFrom(t, lead));
}

/**
 * The prompt size after the fold, in the caller's units: their count (or ours) scaled by how much
 * the replay shrank, since the engine's tokenizer and our estimate may differ.
 */
export function tokensAfterFold(
  view: { summaries: readonly Memory[]; messages: readonly Pick<Message, "id" | "tokens">[] },
  plan: { fold: readonly Pick<Message, "id">[]; marker?: Pick<Message, "tokens"> | undefined; tokensBefore: number },
  summaryTokens: number,
): number {
  const before = replayTokens(view);
  const folded = new Set(plan.fold.map((m) => m.id));
  const kept = view.messages.reduce((n, m) => n + (folded.has(m.id) ? 0 : m.tokens), 0);
  const after = kept + summaryTokens + (plan.marker?.tokens ?? 0);
  return before > 0 ? Math.round((plan.tokensBefore * after) / before) : after;
}
