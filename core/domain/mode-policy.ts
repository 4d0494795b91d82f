/**
 * What each compaction mode does, in one table (docs/compaction.md, "Modes and thresholds"): the
 * threshold ladder, the anchor, which strengths fold, the current turn, the revert hold, the fold
 * target, and how strictly a fold must be worth its summary. The selector, the fold planner, the
 * turn's background step, the worker and the chaos harness read it; a new mode is one row here.
 */
import type { CompactionModeName } from "./model.js";
import type { Strength } from "./strength.js";
import type { Tunables } from "./tunables.js";

/** A mode that folds: every mode but NONE. */
export type FoldModeName = Exclude<CompactionModeName, "NONE">;

export type ModeTunables = Pick<
  Tunables,
  | "softThreshold"
  | "hardThreshold"
  | "emergencyThreshold"
  | "prepareThreshold"
  | "softAnchor"
  | "hardAnchor"
  | "emergencyAnchor"
  | "softMinFoldTokens"
>;

export interface ModePolicy {
  /** The prompt/window ratio from which a turn is in this mode. */
  threshold: (t: Pick<ModeTunables, "softThreshold" | "hardThreshold" | "emergencyThreshold">) => number;
  /**
   * The ratio from which a background turn queues this mode's fold. HARD: when the prompt plus
   * `lead` (the share of the window it is expected to grow by while the fold is prepared,
   * domain/prepare-lead.ts) reaches hardThreshold, never later than prepareThreshold and never
   * before softThreshold; at or above hardThreshold prepareThreshold prepares nothing ahead.
   */
  queuedFrom: (t: Pick<ModeTunables, "softThreshold" | "hardThreshold" | "emergencyThreshold" | "prepareThreshold">, lead?: number) => number;
  /** How many of the newest messages stay verbatim. */
  anchor: (t: Pick<ModeTunables, "softAnchor" | "hardAnchor" | "emergencyAnchor">) => number;
  /** The strengths that fold (docs/compaction.md, "What is folded"); pinned never does. */
  folds: readonly Exclude<Strength, "pinned">[];
  /** The current turn's tool groups older than the anchor may fold (with `foldCurrentTurn`). */
  foldsCurrentTurn: boolean;
  /** After an undo, an automatic fold waits until the replay grew past the hold. */
  honoursRevertHold: boolean;
  /** With a `foldTarget` and a known window, only the oldest part that reaches the target folds. */
  usesFoldTarget: boolean;
  /**
   * The gate: an optional fold (hygiene) runs only when it frees enough to pay for its summary
   * (`softMinFoldTokens`, summarized in the turn or queued alike), and a turn commits a prepared fold
   * in this mode only when it was prepared for this mode. A required fold always runs.
   */
  optional: boolean;
  /**
   * A turn in this mode commits a due PREPARED fold itself (the commit transaction in the turn).
   * Otherwise it asks the worker to commit it and answers the current view, which is still inside
   * the window (docs/compaction.md, "Who commits a prepared fold").
   */
  commitsPreparedInTurn: boolean;
  /** Before the fold, unrated messages are rated by the strength analyzer (`inlineOnCompaction`). */
  ratesStrengthFirst: boolean;
  /**
   * A summary the quality gate refused twice, or a summarizer that failed, is replaced by the
   * offline summarizer's, recorded in `metadata.fallback` (docs/summarizers.md, "Quality gate"):
   * a fold that must land does not wait for a summarizer that keeps failing.
   */
  fallsBackToOffline: boolean;
}

/** The table, mildest mode first. */
export const MODE_POLICY: Readonly<Record<FoldModeName, ModePolicy>> = {
  SOFT: {
    threshold: (t) => t.softThreshold,
    queuedFrom: (t) => t.softThreshold,
    anchor: (t) => t.softAnchor,
    folds: ["weak"],
    foldsCurrentTurn: false,
    honoursRevertHold: true,
    usesFoldTarget: false,
    optional: true,
    commitsPreparedInTurn: false,
    ratesStrengthFirst: false,
    fallsBackToOffline: false,
  },
  HARD: {
    threshold: (t) => t.hardThreshold,
    queuedFrom: (t, lead = 0) =>
      t.prepareThreshold >= t.hardThreshold ? t.hardThreshold : Math.min(t.prepareThreshold, Math.max(t.softThreshold, t.hardThreshold - lead)),
    anchor: (t) => t.hardAnchor,
    folds: ["weak", "normal"],
    foldsCurrentTurn: true,
    honoursRevertHold: true,
    usesFoldTarget: true,
    optional: false,
    commitsPreparedInTurn: false,
    ratesStrengthFirst: true,
    fallsBackToOffline: false,
  },
  EMERGENCY: {
    threshold: (t) => t.emergencyThreshold,
    queuedFrom: (t) => t.emergencyThreshold,
    anchor: (t) => t.emergencyAnchor,
    folds: ["weak", "normal", "strong"],
    foldsCurrentTurn: true,
    // The prompt must never overflow: EMERGENCY does not wait after an undo.
    honoursRevertHold: false,
    usesFoldTarget: true,
    optional: false,
    // The prompt is at the window's edge: the turn does not wait for a worker's commit.
    commitsPreparedInTurn: true,
    ratesStrengthFirst: false,
    fallsBackToOffline: true,
  },
};

/** The fold modes, mildest first. */
export const FOLD_MODES = Object.keys(MODE_POLICY) as FoldModeName[];

/** The policy of a mode; NONE folds nothing and has none. */
export const policyOf = (mode: FoldModeName): ModePolicy => MODE_POLICY[mode];

/**
 * The threshold ladder: the strictest mode whose `rung` the ratio reached, else null. A NaN ratio
 * reaches nothing (no LLM call is spent on nothing to go on); an infinite one reaches the top.
 */
export function climb(ratio: number, rung: (p: ModePolicy) => number): FoldModeName | null {
  for (let i = FOLD_MODES.length - 1; i >= 0; i--) {
    const mode = FOLD_MODES[i]!;
    if (ratio >= rung(MODE_POLICY[mode])) return mode;
  }
  return null;
}

/**
 * The smallest selection (our tokens) worth a summary in `mode`: `softMinFoldTokens` for an
 * optional fold, summarized in the turn or queued for the worker alike; 0 for a required fold.
 */
export function minFoldTokens(mode: FoldModeName, t: Pick<ModeTunables, "softMinFoldTokens">): number {
  return MODE_POLICY[mode].optional ? t.softMinFoldTokens : 0;
}
