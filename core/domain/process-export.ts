/**
 * The export format of a process (docs/api.md, "Export and import"): NDJSON, one JSON value per
 * line. Line 1 names the format and its version; then the process, every message oldest first,
 * every memory newest first, the project's settings override if any, and an `end` line that counts
 * the messages and memories, so a truncated file is told from a whole one. Pure: validation line
 * by line (so a file of any size is checked without holding its messages) and id remapping; the
 * reads and writes are in core/services/process-export.ts and process-import.ts.
 */
import { invalid, type AppError } from "./errors.js";
import { outlineInconsistency } from "./export-consistency.js";
import { Memory, Message, Process } from "./model.js";
import { NATIVE_INLINE_PART_BYTES, NATIVE_MAX_BLOBS, splitNative } from "./native/blob-parts.js";
import type { NativeContent } from "./native/formats.js";
import { projectMessage } from "./native/message-input.js";
import { clearedTokens } from "./replay.js";
import { expiryToIso, originalsExpiry } from "./retention.js";
import { estimateTokens, messageTokens } from "./tokens.js";
import { mapLedgerIds } from "./ledger/model.js";
import { renderLedger } from "./ledger/render.js";
import * as z from "./zod.js";

export * from "./export-lines.js";
import { EXPORT_FORMAT, EXPORT_VERSION, ExportEntryLine, ExportHeader, MAX_LINE_VALUES, MAX_REPORTED_PROBLEMS, type ExportLineEntry as Line } from "./export-lines.js";

// Writing: one line per value, each ending in "\n".
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
export const headerLine = (processId: string, exportedAt: string) =>
  line({ format: EXPORT_FORMAT, version: EXPORT_VERSION, processId, exportedAt });
export const processLine = (process: Process, activeSummaryId: string | null) => line({ kind: "process", process, activeSummaryId });
// `missingResult` is computed for a replay, never stored.
export const messageLine = ({ missingResult: _replayOnly, ...message }: Message) => line({ kind: "message", message });
export const memoryLine = (memory: Memory) => line({ kind: "memory", memory });
export const settingsLine = (projectId: string, overrides: Record<string, unknown>) => line({ kind: "settings", projectId, overrides });
export const endLine = (messages: number, memories: number) => line({ kind: "end", messages, memories });

const lineError = (code: string, lineNo: number, message: string, extra: Record<string, unknown> = {}): AppError =>
  invalid(code, `line ${lineNo}: ${message}`, { line: lineNo, fields: [`body.line.${lineNo}`], ...extra });

function parseJson(text: string, lineNo: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw lineError("import.invalid_line", lineNo, "not a JSON value");
  }
}

/** Whether `value` holds more than `max` array elements and object fields, at any depth (no recursion). */
function holdsMoreThan(value: unknown, max: number): boolean {
  const pending: unknown[] = [value];
  let count = 0;
  while (pending.length > 0) {
    const v = pending.pop();
    if (v === null || typeof v !== "object") continue;
    const children = Array.isArray(v) ? v : Object.values(v);
    count += children.length;
    if (count > max) return true;
    for (const c of children) if (c !== null && typeof c === "object") pending.push(c);
  }
  return false;
}

function parseWith<S extends z.ZodMiniType>(schema: S, value: unknown, lineNo: number): z.infer<S> {
  if (holdsMoreThan(value, MAX_LINE_VALUES)) {
    throw lineError("import.invalid_line", lineNo, `holds more than ${MAX_LINE_VALUES} values (array elements and fields)`);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const all = parsed.error.issues;
  const problems = all.slice(0, MAX_REPORTED_PROBLEMS).map((i) => `${i.path.join(".") || "(line)"}: ${i.message}`);
  const more = all.length - problems.length;
  throw lineError("import.invalid_line", lineNo, `${problems.join("; ")}${more > 0 ? `; and ${more} more` : ""}`, { problems, problemCount: all.length });
}

/**
 * A message line's native content checked by the rules of an append (core/domain/native/
 * message-input.ts): its structure, depth and role, and the blobs it would take.
 */
function blobsOf(message: Pick<Message, "role">, native: NativeContent, text: string, lineNo: number): number {
  const out = projectMessage({ role: message.role, native });
  const problems = out.ok ? [] : out.problems.map((p) => `message.${p.path.join(".")}: ${p.message}`);
  let parts = 0;
  // No string in a shorter line can be past the inline part size (at most 3 UTF-8 bytes a character).
  if (problems.length === 0 && text.length * 3 > NATIVE_INLINE_PART_BYTES) {
    parts = splitNative(native).parts.length;
    if (parts > NATIVE_MAX_BLOBS) problems.push(`message.native: has ${parts} parts past the inline size; the limit is ${NATIVE_MAX_BLOBS}`);
  }
  if (problems.length > 0) throw lineError("import.invalid_line", lineNo, problems.join("; "), { problems });
  return parts;
}

function parseHeader(text: string | undefined): ExportHeader {
  const value = parseJson(text ?? "", 1);
  const version = (value as { version?: unknown } | null)?.version;
  // Told apart from a malformed header: a newer file needs a newer service, not a fix.
  if (typeof version === "number" && version > EXPORT_VERSION) {
    throw invalid("import.version_unsupported", `line 1: format version ${version} is newer than this service reads (${EXPORT_VERSION})`, {
      line: 1,
      version,
      supported: EXPORT_VERSION,
    });
  }
  return parseWith(ExportHeader, value, 1);
}

/** Where each kind of line may stand: the order docs/api.md gives. */
const RANK: Record<Line["kind"], number> = { process: 0, message: 1, memory: 2, settings: 3, end: 4 };

/** One validated line: the header, or a line of the body. */
export type ExportEntry = { kind: "header"; header: ExportHeader } | Line;

/** New ids for an import with `remapIds`: given in file order, so the new ids sort as the old ones did. */
export interface IdSource {
  message(createdAt: string): string;
  memory(createdAt: string): string;
}

/**
 * What a whole export holds besides its messages: enough to write it on a second pass over its
 * lines. Messages are only counted and their ids kept (with their new ids when remapped); the
 * memories, one per fold, are few and kept whole.
 */
export interface ExportOutline {
  header: ExportHeader;
  process: Process;
  activeSummaryId: string | null;
  /** Every message id in file order, to its id in the import (itself when ids are kept). */
  messageIds: ReadonlyMap<string, string>;
  /** Every memory id, to its id in the import. */
  memoryIds: ReadonlyMap<string, string>;
  memories: Memory[];
  /** The first USER message's id in the file, if any. */
  firstUserMessageId: string | null;
  /** How many messages keep parts of their native content as blobs (an import of any needs a blob store). */
  blobMessages: number;
  settings?: { projectId: string; overrides: Record<string, unknown> };
}

export interface ExportScanner {
  /** Validates the next line against its schema, the order, its process and the ids before it. */
  line(text: string): ExportEntry;
  /** The checks only the whole file allows (the `end` line's counts, every memory named present). */
  finish(): ExportOutline;
}

/**
 * Validates an export line by line, holding no message: every line against its schema, the order
 * of the lines, every line of the header's process, no id twice, the `end` line's counts (a file
 * cut short has none, or other counts) and every memory a line names present. Any fault is a 400
 * naming its line (`details.line`, 1-based). Linear in the size of the text. With `ids`, each
 * message and memory is given its new id as it is met (memories oldest first, at the end).
 */
export function scanExport(ids?: IdSource): ExportScanner {
  let lineNo = 0;
  let header: ExportHeader | undefined;
  let process: Process | undefined;
  let activeSummaryId: string | null = null;
  let firstUserMessageId: string | null = null;
  let blobMessages = 0;
  let settings: ExportOutline["settings"];
  const messageIds = new Map<string, string>();
  const memories: Memory[] = [];
  const memoryIds = new Set<string>();
  // Memories come after messages: what messages name is checked once every memory is known.
  const archivedInto = new Map<string, string>();
  let rank = -1;
  let ended = false;

  const body = (text: string): Line => {
    if (ended) throw lineError("import.invalid_line", lineNo, "a line after the end line");
    const entry = parseWith(ExportEntryLine, parseJson(text, lineNo), lineNo);
    const at = RANK[entry.kind];
    const repeatable = entry.kind === "message" || entry.kind === "memory";
    if (at < rank || (at === rank && !repeatable) || (rank === -1 && entry.kind !== "process")) {
      throw lineError("import.invalid_line", lineNo, `a ${entry.kind} line out of order (docs/api.md, "Export and import")`);
    }
    rank = at;
    const ownerId =
      entry.kind === "process" ? entry.process.processId : entry.kind === "message" ? entry.message.processId : entry.kind === "memory" ? entry.memory.processId : header!.processId;
    if (ownerId !== header!.processId) {
      throw lineError("import.foreign_line", lineNo, `a line of process '${ownerId}', not of '${header!.processId}'`);
    }
    if (entry.kind === "process") {
      process = entry.process;
      activeSummaryId = entry.activeSummaryId;
    } else if (entry.kind === "message") {
      const { id, role, createdAt, archivedInMemoryId } = entry.message;
      if (messageIds.has(id)) throw lineError("import.duplicate_id", lineNo, `message id '${id}' appears twice`);
      messageIds.set(id, ids ? ids.message(createdAt) : id);
      if (role === "USER") firstUserMessageId ??= id;
      if (archivedInMemoryId) archivedInto.set(id, archivedInMemoryId);
      if (entry.message.native && blobsOf(entry.message, entry.message.native, text, lineNo) > 0) blobMessages++;
    } else if (entry.kind === "memory") {
      if (memoryIds.has(entry.memory.id)) throw lineError("import.duplicate_id", lineNo, `memory id '${entry.memory.id}' appears twice`);
      memoryIds.add(entry.memory.id);
      memories.push(entry.memory);
    } else if (entry.kind === "settings") {
      // Restored into the project the process belongs to, never into another of the tenant's.
      if (entry.projectId !== process!.projectId) {
        throw lineError("import.invalid_line", lineNo, `settings of project '${entry.projectId}', not of the process's project '${process!.projectId}'`);
      }
      settings = { projectId: entry.projectId, overrides: entry.overrides };
    } else {
      if (entry.messages !== messageIds.size || entry.memories !== memories.length) {
        throw truncated(`the end line counts ${entry.messages} messages and ${entry.memories} memories; the file holds ${messageIds.size} and ${memories.length}`);
      }
      ended = true;
    }
    return entry;
  };

  return {
    line(text) {
      lineNo++;
      if (lineNo > 1) return body(text);
      header = parseHeader(text);
      return { kind: "header", header };
    },
    finish() {
      if (!header) parseHeader(undefined);
      if (!ended) throw truncated(`no end line after line ${lineNo}: the file was cut short`);
      const dangling = (id: string | null | undefined) => id !== null && id !== undefined && id !== "" && !memoryIds.has(id);
      const bad =
        (dangling(activeSummaryId) && activeSummaryId) ||
        [...archivedInto.values()].find(dangling) ||
        memories.find((m) => dangling(m.supersededByMemoryId) || dangling(m.metadata.supersededMemoryId))?.id;
      if (bad) throw invalid("import.dangling_reference", `memory '${bad}' is named but not in the file, or names a memory that is not`, { fields: ["body"] });
      const inconsistent = outlineInconsistency({ activeSummaryId, memories, archivedInto, messageIds });
      if (inconsistent) throw invalid("import.inconsistent", `the export breaks the stored-data invariants: ${inconsistent}`, { fields: ["body"] });
      // Memories come newest first: new ids from the oldest on keep their order.
      const memoryMap = new Map<string, string>();
      for (let i = memories.length - 1; i >= 0; i--) memoryMap.set(memories[i]!.id, ids ? ids.memory(memories[i]!.createdAt) : memories[i]!.id);
      return {
        header: header!,
        process: process!,
        activeSummaryId,
        messageIds,
        memoryIds: memoryMap,
        memories,
        firstUserMessageId,
        blobMessages,
        ...(settings ? { settings } : {}),
      };
    },
  };
}

const truncated = (message: string) => invalid("import.truncated", message, { fields: ["body"] });

/** The lines of an export held as one text (a final "\n" ends the last line, it starts none). */
export function exportLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * The message with the tokens an append would have given it (the whole native projection's, if
 * larger), or a cleared result's placeholder cost: a count from the file could hide a long message
 * from the replay's window.
 */
function ownTokens(m: Message): Message {
  const projected = m.native ? projectMessage({ role: m.role, native: m.native }) : undefined;
  const full = Math.max(messageTokens(m), projected?.ok ? projected.message.tokens : 0);
  if (!m.cleared) return { ...m, tokens: full };
  const cleared = { ...m.cleared, chars: m.content.length, tokens: full };
  return { ...m, cleared, tokens: clearedTokens(m, cleared) };
}

/**
 * A memory's ledger with its message ids moved, its section rendered again from it (the section
 * cites those ids) within the budget it was rendered for, and the tokens of both parts replayed.
 */
function relocatedLedger(m: Memory, msg: (id: string) => string): Pick<Memory, "tokens" | "ledger"> & { metadata?: Memory["metadata"] } {
  if (!m.ledger) return { tokens: estimateTokens(m.content) };
  const ledger = mapLedgerIds(m.ledger, msg);
  const section = m.metadata.ledger ? renderLedger(ledger, m.metadata.ledger.budgetTokens) : undefined;
  return { ledger, tokens: estimateTokens(m.content) + (section?.tokens ?? 0), ...(section ? { metadata: { ...m.metadata, ledger: section } } : {}) };
}

/** Why a queued or prepared fold of the file is imported DISCARDED. */
export const IMPORTED_FOLD = "imported";

/**
 * An original archived into an OK memory expires when that memory's retention says (none without
 * one), whatever its line says: a file read while a revert had made originals safe from the TTL
 * (core/adapters/dynamodb/revert-retention.ts) must not give a copy that keeps them forever.
 */
function withOwnExpiry(m: Message, into: Memory | undefined): Message {
  if (!into || into.status !== "OK") return m;
  const { expiresAt: _fromFile, ...rest } = m;
  const expiry = originalsExpiry(into);
  return expiry === undefined ? rest : { ...rest, expiresAt: expiryToIso(expiry) };
}

/** An export's items as they are written into `processId`. */
export interface Relocation {
  process: Process;
  activeSummaryId: string | null;
  firstUserMessageId: string | null;
  message(m: Message): Message;
  memory(m: Memory): Memory;
}

/**
 * The export moved to `processId`, every id through the outline's maps and every reference with
 * it: sourceRefs, archivedInMemoryId, supersededByMemoryId, metadata.supersededMemoryId and
 * markerMessageId, citations and the loss report's message ids; every token count is the service's
 * own, counted as an append or a fold counts it, never the file's. Tool call ids are the caller's,
 * not the service's: they stay. A message id a memory names that is not in the file (an original
 * no longer stored) stays as it was. A queued or prepared fold comes DISCARDED (`imported`, at
 * `at`): its job belonged to the source, and nothing in the copy would ever run it.
 */
export function relocate(outline: ExportOutline, processId: string, at: string): Relocation {
  const byId = new Map(outline.memories.map((m) => [m.id, m]));
  const msg = (id: string) => outline.messageIds.get(id) ?? id;
  const mem = (id: string) => outline.memoryIds.get(id) ?? id;
  const opt = <T extends string | null | undefined>(id: T, map: (id: string) => string): T => (id ? (map(id) as T) : id);
  const units = (list: { text: string; messageIds: string[] }[]) => list.map((u) => ({ ...u, messageIds: u.messageIds.map(msg) }));
  return {
    process: { ...outline.process, processId },
    activeSummaryId: opt(outline.activeSummaryId, mem),
    firstUserMessageId: opt(outline.firstUserMessageId, msg),
    message: (m) => ownTokens(withOwnExpiry({ ...m, id: msg(m.id), processId, archivedInMemoryId: opt(m.archivedInMemoryId, mem) }, m.archivedInMemoryId ? byId.get(m.archivedInMemoryId) : undefined)),
    memory(m) {
      const { metadata } = m;
      const relocated = relocatedLedger(m, msg);
      return {
        ...m,
        tokens: relocated.tokens,
        ...(relocated.ledger ? { ledger: relocated.ledger } : {}),
        id: mem(m.id),
        processId,
        sourceRefs: m.sourceRefs.map(msg),
        ...(m.supersededByMemoryId !== undefined ? { supersededByMemoryId: opt(m.supersededByMemoryId, mem) } : {}),
        ...(m.citations ? { citations: m.citations.map((line) => line.map(msg)) } : {}),
        ...(m.droppedUnits ? { droppedUnits: units(m.droppedUnits) } : {}),
        ...(m.status === "QUEUED" || m.status === "PREPARED" ? { status: "DISCARDED" as const } : {}),
        metadata: {
          ...metadata,
          ...(relocated.metadata ? { ledger: relocated.metadata.ledger } : {}),
          ...(m.status === "QUEUED" || m.status === "PREPARED" ? { discardReason: IMPORTED_FOLD, discardedAt: at } : {}),
          ...(metadata.supersededMemoryId !== undefined ? { supersededMemoryId: mem(metadata.supersededMemoryId) } : {}),
          ...(metadata.markerMessageId !== undefined ? { markerMessageId: msg(metadata.markerMessageId) } : {}),
          ...(metadata.loss ? { loss: { ...metadata.loss, dropped: units(metadata.loss.dropped) } } : {}),
        },
      };
    },
  };
}
