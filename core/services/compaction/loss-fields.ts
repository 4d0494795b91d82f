/**
 * What a summary no longer carries of the messages it folds (docs/summarizers.md, "What a fold
 * lost"): the loss report a fold's row is stored with, and the strong and pinned sources it is
 * counted over. Apart from ./summary-fields.ts (the ledger and the required units, which only a
 * fold needs), so that the undo path the plain routes serve stays small (docs/benchmarks.md,
 * "Cold start").
 */
import type { Message } from "../../domain/model.js";
import { replayed } from "../../domain/replay.js";
import { lossReport } from "../../domain/salient-units.js";
import { effectiveStrength } from "../../domain/strength.js";

/** What `text` no longer carries of the messages `fold` (all the messages the summary covers). */
export function lossFields(fold: readonly Message[], text: string) {
  const loss = lossReport(sourcesOf(fold), text);
  return {
    loss: { units: loss.units, kept: loss.kept, dropped: loss.dropped.slice(0, LOSS_PREVIEW).map(boundedLoss) },
    droppedUnits: loss.dropped.slice(0, LOSS_STORED).map(boundedLoss),
  };
}

/** The dropped units kept in `metadata.loss` (replayed with the view) and in the full list. */
const LOSS_PREVIEW = 20;
const LOSS_STORED = 300;

const boundedLoss = (u: { text: string; messageIds: string[] }) => ({ text: u.text.slice(0, 200), messageIds: u.messageIds.slice(0, 20) });

export const isImportant = (m: Message) => {
  const s = effectiveStrength(m);
  return s === "strong" || s === "pinned";
};

// What the summarizer sees: a cleared result as its placeholder (see summarizeChunks).
export const sourcesOf = (fold: readonly Message[]) =>
  fold.map((m) => ({ id: m.id, content: replayed(m).content, important: isImportant(m) }));
