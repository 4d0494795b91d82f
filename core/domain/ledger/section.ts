/**
 * What a stored memory and the block need of the evidence ledger (docs/evidence-ledger.md, "The
 * section and its bound"): the section's shape, the stored ledger's, the heading and the tool
 * kinds. Apart from ./model.ts, whose schemas only folds and imports need, so the routes that never
 * fold stay small (docs/benchmarks.md, "Cold start").
 */
import * as z from "../zod.js";
import type { Ledger } from "./model.js";

export const LEDGER_HEADING = "Evidence Ledger";

/** What a tool does: an operation on the files its arguments name, running a command, or nothing the ledger keeps. */
export type ToolKind = "read" | "create" | "edit" | "delete" | "command" | "patch" | "search" | "ignore";
export const TOOL_KINDS: readonly ToolKind[] = ["read", "create", "edit", "delete", "command", "patch", "search", "ignore"];

/**
 * What the memory's metadata says of its ledger (replayed with the summary): the section's text as
 * it was rendered when the fold committed, its tokens, the budget it was rendered for, and how
 * many entries of each kind the ledger holds.
 */
export const LedgerSection = z.object({
  text: z.string(),
  tokens: z.int(),
  budgetTokens: z.int(),
  files: z.int(),
  commands: z.int(),
  errors: z.int(),
  openErrors: z.int(),
  constraints: z.int(),
});
export type LedgerSection = z.infer<typeof LedgerSection>;

/**
 * The ledger as a stored memory carries it: only checked to be an object. The service writes it
 * within the bounds of ./model.ts's `Ledger`, an import checks it against that schema, and reading
 * it back needs no second check.
 */
export const StoredLedger = z.custom<Ledger>((v) => typeof v === "object" && v !== null && !Array.isArray(v));

/** Whether the ledger holds nothing worth a section. */
export const isEmptyLedger = (l: Ledger) => l.files.length + l.commands.length + l.errors.length + l.constraints.length === 0;

/** Whether a summary stores the ledger: it lists something, or waits for a result. */
export const keepsLedger = (l: Ledger) => !isEmptyLedger(l) || l.pending.length > 0;
