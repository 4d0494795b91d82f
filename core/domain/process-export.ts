/**
 * The export format of a process (docs/api.md, "Export and import"): NDJSON, one JSON value per
 * line. Line 1 names the format and its version; then the process, every message oldest first,
 * every memory newest first, the project's settings override if any, and an `end` line that counts
 * the messages and memories, so a truncated file is told from a whole one. Pure: parsing,
 * validation and id remapping; the reads and writes are in core/services/process-export.ts and
 * process-import.ts.
 */
import { invalid, type AppError } from "./errors.js";
import { Id } from "./fields.js";
import { Memory, Message, Process } from "./model.js";
import * as z from "./zod.js";

export const EXPORT_FORMAT = "vancetope-memory-export";
export const EXPORT_VERSION = 1;

export const ExportHeader = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  version: z.int().check(z.positive()),
  processId: Id,
  exportedAt: z.string(),
});
export type ExportHeader = z.infer<typeof ExportHeader>;

/** A stored message (`missingResult` exists only in a replay, never in an export). */
export const ExportedMessage = z.omit(Message, { missingResult: true });

const ProcessLine = z.strictObject({ kind: z.literal("process"), process: Process, activeSummaryId: z.nullable(z.string()) });
const MessageLine = z.strictObject({ kind: z.literal("message"), message: ExportedMessage });
const MemoryLine = z.strictObject({ kind: z.literal("memory"), memory: Memory });
const SettingsLine = z.strictObject({
  kind: z.literal("settings"),
  projectId: z.string(),
  overrides: z.record(z.string(), z.unknown()),
});
const EndLine = z.strictObject({
  kind: z.literal("end"),
  messages: z.int().check(z.nonnegative()),
  memories: z.int().check(z.nonnegative()),
});
/** Every line of an export after the header, told apart by its `kind`. */
export const ExportEntryLine = z.discriminatedUnion("kind", [ProcessLine, MessageLine, MemoryLine, SettingsLine, EndLine]);
type Line = z.infer<typeof ExportEntryLine>;

/** A whole export, validated. */
export interface ProcessExport {
  header: ExportHeader;
  process: Process;
  activeSummaryId: string | null;
  messages: Message[];
  memories: Memory[];
  settings?: { projectId: string; overrides: Record<string, unknown> };
}

// Writing: one line per value, each ending in "\n".
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
export const headerLine = (processId: string, exportedAt: string) =>
  line({ format: EXPORT_FORMAT, version: EXPORT_VERSION, processId, exportedAt });
export const processLine = (process: Process, activeSummaryId: string | null) => line({ kind: "process", process, activeSummaryId });
export const messageLine = (message: Message) => {
  const { missingResult: _replayOnly, ...stored } = message;
  return line({ kind: "message", message: stored });
};
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

function parseWith<S extends z.ZodMiniType>(schema: S, value: unknown, lineNo: number): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(line)"}: ${i.message}`);
  throw lineError("import.invalid_line", lineNo, issues.join("; "), { problems: issues });
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

/**
 * Parses and validates a whole export before anything is written: every line against its schema,
 * the order of the lines, every line of the header's process, no id twice, every memory a line
 * names present, and the `end` line's counts (a file cut short has none, or other counts). Any
 * fault is a 400 naming its line (`details.line`). Linear in the size of the text.
 */
export function parseExport(text: string): ProcessExport {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const header = parseHeader(lines[0]);
  const out: ProcessExport = { header, process: undefined as never, activeSummaryId: null, messages: [], memories: [] };
  const messageIds = new Set<string>();
  const memoryIds = new Set<string>();
  let rank = -1;
  let ended = false;
  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1;
    if (ended) throw lineError("import.invalid_line", lineNo, "a line after the end line");
    const entry = parseWith(ExportEntryLine, parseJson(lines[i]!, lineNo), lineNo);
    const at = RANK[entry.kind];
    const repeatable = entry.kind === "message" || entry.kind === "memory";
    if (at < rank || (at === rank && !repeatable) || (rank === -1 && entry.kind !== "process")) {
      throw lineError("import.invalid_line", lineNo, `a ${entry.kind} line out of order (docs/api.md, "Export and import")`);
    }
    rank = at;
    const ownerId =
      entry.kind === "process" ? entry.process.processId : entry.kind === "message" ? entry.message.processId : entry.kind === "memory" ? entry.memory.processId : header.processId;
    if (ownerId !== header.processId) {
      throw lineError("import.foreign_line", lineNo, `a line of process '${ownerId}', not of '${header.processId}'`);
    }
    if (entry.kind === "process") {
      out.process = entry.process;
      out.activeSummaryId = entry.activeSummaryId;
    } else if (entry.kind === "message") {
      if (messageIds.has(entry.message.id)) throw lineError("import.duplicate_id", lineNo, `message id '${entry.message.id}' appears twice`);
      messageIds.add(entry.message.id);
      out.messages.push(entry.message);
    } else if (entry.kind === "memory") {
      if (memoryIds.has(entry.memory.id)) throw lineError("import.duplicate_id", lineNo, `memory id '${entry.memory.id}' appears twice`);
      memoryIds.add(entry.memory.id);
      out.memories.push(entry.memory);
    } else if (entry.kind === "settings") {
      out.settings = { projectId: entry.projectId, overrides: entry.overrides };
    } else {
      if (entry.messages !== out.messages.length || entry.memories !== out.memories.length) {
        throw truncated(`the end line counts ${entry.messages} messages and ${entry.memories} memories; the file holds ${out.messages.length} and ${out.memories.length}`);
      }
      ended = true;
    }
  }
  if (!ended) throw truncated(`no end line after line ${lines.length}: the file was cut short`);
  checkMemoryReferences(out, memoryIds);
  return out;
}

const truncated = (message: string) => invalid("import.truncated", message, { fields: ["body"] });

/** Every memory id a line names is a memory of the file: otherwise no remapping could keep it. */
function checkMemoryReferences(e: ProcessExport, memoryIds: ReadonlySet<string>) {
  const dangling = (id: string | null | undefined) => id !== null && id !== undefined && id !== "" && !memoryIds.has(id);
  const bad =
    (dangling(e.activeSummaryId) && e.activeSummaryId) ||
    e.messages.find((m) => dangling(m.archivedInMemoryId))?.archivedInMemoryId ||
    e.memories.find((m) => dangling(m.supersededByMemoryId) || dangling(m.metadata.supersededMemoryId))?.id;
  if (bad) throw invalid("import.dangling_reference", `memory '${bad}' is named but not in the file, or names a memory that is not`, { fields: ["body"] });
}

/** New ids for an import with `remapIds`: given in file order, so the new ids sort as the old ones did. */
export interface IdSource {
  message(createdAt: string): string;
  memory(createdAt: string): string;
}

/**
 * The export moved to `processId`, with new message and memory ids when `ids` is given and every
 * reference rewritten with them: sourceRefs, archivedInMemoryId, supersededByMemoryId,
 * metadata.supersededMemoryId and markerMessageId, citations and the loss report's message ids.
 * Tool call ids are the caller's, not the service's: they stay. A message id a memory names that is
 * not in the file (an original no longer stored) stays as it was.
 */
export function relocateExport(e: ProcessExport, processId: string, ids?: IdSource): ProcessExport {
  const messageIds = new Map<string, string>();
  const memoryIds = new Map<string, string>();
  if (ids) {
    for (const m of e.messages) messageIds.set(m.id, ids.message(m.createdAt));
    // Memories come newest first: new ids from the oldest on keep their order.
    for (let i = e.memories.length - 1; i >= 0; i--) memoryIds.set(e.memories[i]!.id, ids.memory(e.memories[i]!.createdAt));
  }
  const msg = (id: string) => messageIds.get(id) ?? id;
  const mem = (id: string) => memoryIds.get(id) ?? id;
  const opt = <T extends string | null | undefined>(id: T, map: (id: string) => string): T => (id ? (map(id) as T) : id);
  const units = (list: { text: string; messageIds: string[] }[]) => list.map((u) => ({ ...u, messageIds: u.messageIds.map(msg) }));
  return {
    ...e,
    process: { ...e.process, processId },
    activeSummaryId: opt(e.activeSummaryId, mem),
    messages: e.messages.map((m) => ({ ...m, id: msg(m.id), processId, archivedInMemoryId: opt(m.archivedInMemoryId, mem) })),
    memories: e.memories.map((m) => {
      const { metadata } = m;
      return {
        ...m,
        id: mem(m.id),
        processId,
        sourceRefs: m.sourceRefs.map(msg),
        ...(m.supersededByMemoryId !== undefined ? { supersededByMemoryId: opt(m.supersededByMemoryId, mem) } : {}),
        ...(m.citations ? { citations: m.citations.map((line) => line.map(msg)) } : {}),
        ...(m.droppedUnits ? { droppedUnits: units(m.droppedUnits) } : {}),
        metadata: {
          ...metadata,
          ...(metadata.supersededMemoryId !== undefined ? { supersededMemoryId: mem(metadata.supersededMemoryId) } : {}),
          ...(metadata.markerMessageId !== undefined ? { markerMessageId: msg(metadata.markerMessageId) } : {}),
          ...(metadata.loss ? { loss: { ...metadata.loss, dropped: units(metadata.loss.dropped) } } : {}),
        },
      };
    }),
  };
}
