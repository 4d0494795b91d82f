/**
 * Building the evidence ledger (docs/evidence-ledger.md, "The evidence ledger"): the prior summary's
 * ledger carried forward and extended by the messages a fold folds, oldest first. Pure,
 * deterministic and linear in the messages: every message adds a bounded number of entries, and
 * the caps of {@link LEDGER_LIMITS} hold after every fold.
 */
import type { Message } from "../model.js";
import { strengthTagOf } from "../strength.js";
import { emptyLedger, LEDGER_LIMITS, type FileOp, type Ledger, type LedgerCommand, type LedgerConstraint, type LedgerError, type LedgerFile, type PendingCall } from "./model.js";
import { outcomeOf, resultErrors, ruleSentences } from "./scan.js";
import { classifyCall } from "./tools.js";

/** What a message gives the ledger: its id, role, text, calls and results (the projection), and native content when it flags an error. */
export type LedgerSource = Pick<Message, "id" | "role" | "content" | "tags" | "toolCalls" | "toolCallId" | "toolCallIds" | "native">;

/** Insertion-ordered maps whose `touch` moves an entry to the end: the ledger's recency order. */
class Recent<T> {
  readonly map = new Map<string, T>();
  constructor(entries: readonly T[], key: (t: T) => string) {
    for (const e of entries) this.map.set(key(e), e);
  }
  get(key: string) {
    return this.map.get(key);
  }
  touch(key: string, value: T) {
    this.map.delete(key);
    this.map.set(key, value);
  }
  values() {
    return [...this.map.values()];
  }
}

/** A later read does not hide a change: an edited file that is read again stays edited. */
function nextOp(before: FileOp | undefined, op: FileOp): FileOp {
  return op === "read" && before !== undefined && before !== "read" ? before : op;
}

/** The calls a message answers: its one result's call, or every call its native content answers. */
const answeredIds = (m: LedgerSource) => (m.toolCallIds && m.toolCallIds.length > 0 ? m.toolCallIds : m.toolCallId ? [m.toolCallId] : []);

/** Whether the provider flagged the result of `callId` an error (Anthropic's `is_error`), which the text projection does not keep. */
function flaggedError(m: LedgerSource, callId: string): boolean {
  if (m.native?.format !== "anthropic") return false;
  return (m.native.content as Array<Record<string, unknown>>).some((b) => b.type === "tool_result" && b.tool_use_id === callId && b.is_error === true);
}

const errorKey = (text: string) => text.toLowerCase();

/**
 * `prior` (or an empty ledger) extended by `messages`, oldest first. `ownTools` maps an engine's
 * own tool names to a kind (the `ledgerTools` tunable). Never changes `prior`.
 */
export function extendLedger(prior: Ledger | null | undefined, messages: readonly LedgerSource[], ownTools: Readonly<Record<string, string>> = {}): Ledger {
  const base = prior ?? emptyLedger();
  const files = new Recent<LedgerFile>(base.files, (f) => f.path);
  const commands = new Recent<LedgerCommand>(base.commands, (c) => c.command);
  const errors = new Recent<LedgerError>(base.errors, (e) => errorKey(e.text));
  const constraints = new Recent<LedgerConstraint>(base.constraints, (c) => c.text.toLowerCase());
  const pending = new Recent<PendingCall>(base.pending, (p) => p.callId);
  // The open errors of each source, so that a clean run resolves them without a scan of all errors.
  const open = new Map<string, Set<string>>();
  for (const e of base.errors) if (e.source !== undefined && e.resolvedBy === undefined) openOf(open, e.source).add(errorKey(e.text));

  for (const m of messages) {
    if (m.role === "USER" || strengthTagOf(m.tags) === "pinned") {
      const stated = m.role === "USER" ? ruleSentences(m.content) : [];
      for (const text of stated) constraints.touch(text.toLowerCase(), { text, messageId: m.id });
    }
    for (const call of m.toolCalls ?? []) {
      const evidence = classifyCall(call, ownTools);
      if (!evidence) continue;
      for (const f of evidence.files) {
        const before = files.get(f.path);
        const op = nextOp(before?.op, f.op);
        files.touch(f.path, { path: f.path, op, messageId: op === f.op ? m.id : before!.messageId });
      }
      if (evidence.command) {
        const runs = (commands.get(evidence.command)?.runs ?? 0) + 1;
        commands.touch(evidence.command, { command: evidence.command, outcome: "pending", messageId: m.id, runs });
      }
      const reads = evidence.kind === "read" || evidence.kind === "search";
      pending.touch(call.id, { callId: call.id, ...(evidence.command ? { command: evidence.command } : {}), source: evidence.source, ...(reads ? { reads: true as const } : {}) });
    }
    for (const callId of answeredIds(m)) {
      const call = pending.get(callId);
      if (!call) continue;
      pending.map.delete(callId);
      answer(m, call, { commands, errors, open });
    }
  }
  return bounded({
    files: files.values(),
    commands: commands.values(),
    errors: errors.values(),
    constraints: constraints.values(),
    pending: pending.values(),
    evicted: { ...base.evicted },
  });
}

/** A result for `call`: its command's outcome, its error lines, and the errors of the same source a clean run resolves. */
function answer(m: LedgerSource, call: PendingCall, into: { commands: Recent<LedgerCommand>; errors: Recent<LedgerError>; open: Map<string, Set<string>> }) {
  const flagged = flaggedError(m, call.callId);
  const { outcome, clean } = outcomeOf(m.content, flagged);
  if (call.command) {
    const entry = into.commands.get(call.command);
    if (entry) into.commands.touch(call.command, { ...entry, outcome, resultId: m.id });
  }
  const lines = resultErrors(call.reads === true, m.content, flagged);
  if (lines.length === 0 && (clean || call.reads)) {
    for (const key of into.open.get(call.source) ?? []) {
      const e = into.errors.get(key);
      if (e && e.resolvedBy === undefined) into.errors.map.set(key, { ...e, resolvedBy: m.id });
    }
    into.open.delete(call.source);
  }
  for (const text of lines) {
    const key = errorKey(text);
    const before = into.errors.get(key);
    if (before?.source !== undefined && before.source !== call.source) into.open.get(before.source)?.delete(key);
    into.errors.touch(key, { text, messageId: m.id, source: call.source });
    openOf(into.open, call.source).add(key);
  }
}

function openOf(open: Map<string, Set<string>>, source: string): Set<string> {
  let keys = open.get(source);
  if (!keys) open.set(source, (keys = new Set()));
  return keys;
}

/**
 * Drops entries past each cap, the least useful first: files only read before changed ones,
 * resolved errors before open ones, clean commands before failed ones, then the oldest; each
 * dropped entry is counted in `evicted`.
 */
function bounded(l: Ledger): Ledger {
  const cut = <T>(list: T[], cap: number, expendable: (t: T) => boolean): { kept: T[]; dropped: number } => {
    let over = list.length - cap;
    if (over <= 0) return { kept: list, dropped: 0 };
    const dropped = over;
    const drop = new Set<T>();
    for (const t of list) if (over > 0 && expendable(t)) (drop.add(t), over--);
    for (const t of list) if (over > 0 && !drop.has(t)) (drop.add(t), over--);
    return { kept: list.filter((t) => !drop.has(t)), dropped };
  };
  const files = cut(l.files, LEDGER_LIMITS.files, (f) => f.op === "read");
  const commands = cut(l.commands, LEDGER_LIMITS.commands, (c) => c.outcome === "ok" || c.outcome === "exit 0");
  const errors = cut(l.errors, LEDGER_LIMITS.errors, (e) => e.resolvedBy !== undefined);
  const constraints = cut(l.constraints, LEDGER_LIMITS.constraints, () => true);
  const pending = l.pending.slice(Math.max(0, l.pending.length - LEDGER_LIMITS.pending));
  return {
    files: files.kept,
    commands: commands.kept,
    errors: errors.kept,
    constraints: constraints.kept,
    pending,
    evicted: {
      files: l.evicted.files + files.dropped,
      commands: l.evicted.commands + commands.dropped,
      errors: l.evicted.errors + errors.dropped,
      constraints: l.evicted.constraints + constraints.dropped,
    },
  };
}
