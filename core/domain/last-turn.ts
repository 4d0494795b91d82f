/**
 * What the service keeps of a process's last turn (docs/turns.md, "The last turn's record"): the
 * window it used and what its answer replayed. Kept on META, so the next turn reads it in its one
 * Query; a field added here is stored, read and shown without any other change (readers built
 * before it ignore it).
 */
import * as z from "./zod.js";
import { ReplayMark } from "./prefix.js";

/** Where a window came from: the request's `contextWindow`, a known model name, or the `maxPromptTokens` cap. */
export const WindowSource = z.enum(["request", "model", "setting"]);

/** The window a turn or a compaction worked against (`model`: the listed name a `model.name` matched). */
export const TurnWindowShape = z.object({
  tokens: z.int().check(z.positive()),
  source: WindowSource,
  model: z.optional(z.string()),
});

export const LastTurn = z.object({
  /** When the record was last written: by every turn that appends, and by one whose window or replay changed. */
  at: z.string(),
  window: TurnWindowShape,
  /** The summary the turn's answer replayed (null: none). */
  summaryId: z.nullable(z.string()),
  /** META's version the answer was composed at (a commit, an undo or a strength change bumps it). */
  version: z.int().check(z.nonnegative()),
  /** What decided the answer's prompt besides its appends (docs/turns.md, "Append-only between folds"). */
  replay: z.optional(ReplayMark),
  /** `turn`: the model the turn named folds whole turns only, which a range job (it names no model) keeps to. */
  foldUnit: z.optional(z.literal("turn")),
});
export type LastTurn = z.infer<typeof LastTurn>;

/** Whether two records say the same, whenever they were written (`at` aside; any field, nested ones included). */
export function sameTurnRecord(a: LastTurn | undefined, b: LastTurn): boolean {
  return a !== undefined && canonical({ ...a, at: "" }) === canonical({ ...b, at: "" });
}

/** JSON with every object's keys in order, so that two equal records read back in any key order compare equal. */
const canonical = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1))) : v,
  );
