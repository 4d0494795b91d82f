/**
 * The evidence ledger of a process (docs/evidence-ledger.md, "The evidence ledger"): what its folded
 * messages did to files, which commands they ran and how those ended, which errors they saw and
 * whether a later result resolved them, and what the user told the agent never or always to do.
 * Kept on each committed summary, built from the folded messages without a model call, carried
 * forward by every fold and replayed as its own section of the memory block.
 */
import * as z from "../zod.js";

/**
 * Bounds of the stored ledger, whatever the folds feed it (docs/compaction.md, "The evidence
 * ledger"): each entry's text is cut to its limit, each list keeps at most its cap, and the most
 * any one message adds is capped too, so a fold's cost follows its number of messages.
 */
export const LEDGER_LIMITS = Object.freeze({
  pathChars: 240,
  commandChars: 160,
  errorChars: 200,
  constraintChars: 300,
  files: 400,
  commands: 200,
  errors: 150,
  constraints: 60,
  pending: 100,
  /** Error lines taken from one tool result, and rule sentences from one USER message. */
  errorsPerResult: 3,
  constraintsPerMessage: 5,
  /** Paths taken from one tool call (an `apply_patch` of many files, a multi-file read). */
  pathsPerCall: 20,
  /** Characters of one message's text the rules read: its start and its end. */
  scanChars: 32 * 1024,
});

const LIMITS = LEDGER_LIMITS;
/** Texts and lists as the caps bound them (an import is held to the same bounds; a path's cut adds its ellipsis within the limit). */
const text = (max: number) => z.string().check(z.maxLength(max));
const id = z.string().check(z.minLength(1), z.maxLength(256));
const list = <T extends z.ZodMiniType>(item: T, max: number) => z.array(item).check(z.maxLength(max));

export const FileOp = z.enum(["read", "created", "edited", "deleted"]);
export type FileOp = z.infer<typeof FileOp>;

/** A file (or folder) the folded messages named in a tool call: its last operation and where. */
export const LedgerFile = z.object({ path: text(LIMITS.pathChars), op: FileOp, messageId: id });
export type LedgerFile = z.infer<typeof LedgerFile>;

/**
 * A command the folded messages ran: its first line, how its last run ended (`exit N`, `failed`,
 * `ok`, or `pending` while its result is not folded yet), the message that made the call and
 * the one that answered it, and how many runs it had.
 */
export const LedgerCommand = z.object({
  command: text(LIMITS.commandChars),
  outcome: text(16),
  messageId: id,
  resultId: z.optional(id),
  runs: z.int().check(z.positive()),
});
export type LedgerCommand = z.infer<typeof LedgerCommand>;

/**
 * An error line a tool result showed, the message that showed it, what it came from (a command's
 * first line or a tool and path), and the later result that ran the same thing cleanly.
 */
export const LedgerError = z.object({
  text: text(LIMITS.errorChars),
  messageId: id,
  source: z.optional(text(LIMITS.commandChars + 300)),
  resolvedBy: z.optional(id),
});
export type LedgerError = z.infer<typeof LedgerError>;

/** A sentence of a USER message that sets a rule ("never …", "always …", "do not …", "must …"). */
export const LedgerConstraint = z.object({ text: text(LIMITS.constraintChars), messageId: id });
export type LedgerConstraint = z.infer<typeof LedgerConstraint>;

/**
 * A call whose result was not folded yet: what a later fold needs to give it an outcome. `reads`:
 * its result is a file's contents or search hits, whose error words are not errors.
 */
export const PendingCall = z.object({
  callId: text(256),
  command: z.optional(text(LIMITS.commandChars)),
  source: text(LIMITS.commandChars + 300),
  reads: z.optional(z.literal(true)),
});
export type PendingCall = z.infer<typeof PendingCall>;

/** Entries dropped from the stored ledger past its caps, per kind (the oldest, least important first). */
export const LedgerEvicted = z.object({ files: z.int(), commands: z.int(), errors: z.int(), constraints: z.int() });

/** Each list oldest first by its last touch (a later touch moves an entry to the end). */
export const Ledger = z.object({
  files: list(LedgerFile, LIMITS.files),
  commands: list(LedgerCommand, LIMITS.commands),
  errors: list(LedgerError, LIMITS.errors),
  constraints: list(LedgerConstraint, LIMITS.constraints),
  pending: list(PendingCall, LIMITS.pending),
  evicted: LedgerEvicted,
});
export type Ledger = z.infer<typeof Ledger>;



export const emptyLedger = (): Ledger => ({
  files: [],
  commands: [],
  errors: [],
  constraints: [],
  pending: [],
  evicted: { files: 0, commands: 0, errors: 0, constraints: 0 },
});



/** Every message id the ledger cites. */
export function ledgerMessageIds(l: Ledger): string[] {
  const ids = new Set<string>();
  for (const f of l.files) ids.add(f.messageId);
  for (const c of l.commands) {
    ids.add(c.messageId);
    if (c.resultId) ids.add(c.resultId);
  }
  for (const e of l.errors) {
    ids.add(e.messageId);
    if (e.resolvedBy) ids.add(e.resolvedBy);
  }
  for (const c of l.constraints) ids.add(c.messageId);
  return [...ids];
}

/** The ledger with every message id passed through `map` (an import moves ids). */
export function mapLedgerIds(l: Ledger, map: (id: string) => string): Ledger {
  return {
    ...l,
    files: l.files.map((f) => ({ ...f, messageId: map(f.messageId) })),
    commands: l.commands.map((c) => ({ ...c, messageId: map(c.messageId), ...(c.resultId ? { resultId: map(c.resultId) } : {}) })),
    errors: l.errors.map((e) => ({ ...e, messageId: map(e.messageId), ...(e.resolvedBy ? { resolvedBy: map(e.resolvedBy) } : {}) })),
    constraints: l.constraints.map((c) => ({ ...c, messageId: map(c.messageId) })),
  };
}
