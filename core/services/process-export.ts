/**
 * Exporting a process (docs/api.md, "Export and import"): the export's lines, page by page. A page
 * holds as many message and memory lines as fit EXPORT_PAGE_BYTES (a single larger line is a page
 * of its own), each message with its native content whole, blobs put back, so no container holds
 * the whole process at once; the last page ends with the project's settings override and the
 * `end` line. A cursor says where the next page starts, how many messages came before it, and
 * the META version the pages are a snapshot of.
 */
import { conflict, invalid } from "../domain/errors.js";
import { endLine, headerLine, memoryLine, messageLine, processLine, settingsLine } from "../domain/process-export.js";
import { keptAt } from "../domain/retention.js";
import * as z from "../domain/zod.js";
import type { ProcessKey, ProcessState } from "../ports/store.js";
import { settledView } from "./compaction/settle.js";
import type { ExportPaging, ServiceDeps } from "./deps.js";
import { withBlock, withNative } from "./native-content.js";
import { requireProcess } from "./processes.js";

/** Most bytes of a page's lines before its memories (well below Lambda's 6 MB response). */
export const EXPORT_PAGE_BYTES = 2 * 1024 * 1024;
/** Messages per store read (a Query also stops at 1 MB). */
export const EXPORT_READ_MESSAGES = 500;

/**
 * More messages than a process can hold: its partition, on a table with a local index, stops at
 * 10 GB, and a stored message takes more than 100 bytes. A cursor counting more is forged.
 */
const MAX_PROCESS_MESSAGES = 100_000_000;

/**
 * Where the next page starts: the store read from `after` (absent: the first), past the message
 * `last` when a page ended inside that read, with `messages` exported before it.
 */
const ExportCursor = z.strictObject({
  after: z.optional(z.string().check(z.minLength(1))),
  last: z.optional(z.string().check(z.minLength(1))),
  messages: z.int().check(z.nonnegative(), z.lte(MAX_PROCESS_MESSAGES)),
  /** Past the messages: how many memory lines came before this page. */
  memories: z.optional(z.int().check(z.nonnegative(), z.lte(MAX_PROCESS_MESSAGES))),
  /** META's version the first page read: every later page must find it unchanged. */
  version: z.int().check(z.nonnegative()),
});
export type ExportCursor = z.infer<typeof ExportCursor>;

/** The cursor as base64url text (no "."), for the HTTP layer to seal (docs/api.md, "Paging"). */
export const encodeExportCursor = (c: ExportCursor) => Buffer.from(JSON.stringify(c)).toString("base64url");

export function decodeExportCursor(text: string): ExportCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  const parsed = ExportCursor.safeParse(value);
  if (!parsed.success) throw invalid("cursor.invalid", "cursor is not valid for this listing", { fields: ["query.cursor"] });
  return parsed.data;
}

export interface ExportPage {
  /** NDJSON lines, each ending in "\n". */
  text: string;
  /** Absent on the last page. */
  next?: ExportCursor;
}

/**
 * One page of the export of a live process (404 for a deleted or unknown one, or another
 * tenant's). The pages are one snapshot: the first finishes a pending roll-forward before it reads
 * anything, and every page checks, before and after its reads, that META's version is the one the
 * first page read, with no roll-forward pending; a fold, an undo or a pin since is a 409
 * `export.changed` (docs/api.md, "Export and import").
 */
export async function exportPage(
  deps: ServiceDeps,
  key: ProcessKey,
  from?: ExportCursor,
  limits: ExportPaging = deps.exportPaging ?? { pageBytes: EXPORT_PAGE_BYTES, readMessages: EXPORT_READ_MESSAGES },
): Promise<ExportPage> {
  let state = await requireProcess(deps, key);
  if (!from && state.pendingArchive) state = (await settledView(deps, key)).state;
  const version = from?.version ?? state.version;
  unmoved(key, version, state);
  const page = await readPage(deps, key, state, version, limits, from);
  unmoved(key, version, await requireProcess(deps, key));
  return page;
}

/** A 409 unless META is still at `version` with no roll-forward pending. */
function unmoved(key: ProcessKey, version: number, now: ProcessState) {
  if (now.version === version && !now.pendingArchive) return;
  throw conflict("export.changed", `process '${key.processId}' changed while it was exported (a fold, an undo or a pin); export it again from the first page`, {
    version,
    currentVersion: now.version,
  });
}

async function readPage(deps: ServiceDeps, key: ProcessKey, state: ProcessState, version: number, limits: ExportPaging, from?: ExportCursor): Promise<ExportPage> {
  const chunks: string[] = [];
  if (!from) {
    chunks.push(headerLine(key.processId, deps.clock.now().toISOString()), processLine(state.process, state.activeSummaryId));
  }
  let bytes = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0);
  let lines = 0;
  let lastId: string | undefined;
  let messages = from?.messages ?? 0;
  let after = from?.after;
  let skipThrough = from?.last;
  const now = deps.clock.now();
  // A line goes on the page if it is the page's first or keeps the page within its budget.
  const fits = (text: string) => {
    const size = Buffer.byteLength(text);
    if (lines > 0 && bytes + size > limits.pageBytes) return false;
    chunks.push(text);
    bytes += size;
    lines++;
    return true;
  };
  // A cursor past the messages reads none.
  if (from?.memories === undefined) {
    do {
      const read = after;
      const page = await deps.store.listMessages(key, { limit: limits.readMessages, ...(read ? { cursor: read } : {}) });
      // An original past its retention is gone, whether or not DynamoDB has removed it yet. Ids are
      // ASCII and the store lists them in byte order: those up to `last` were on an earlier page.
      const kept = keptAt(page.items, now).filter((m) => skipThrough === undefined || m.id > skipThrough);
      skipThrough = undefined;
      for (const m of kept) {
        // One at a time: a message's blobs may be megabytes, a page holds only what it sends.
        const [whole] = await withNative(deps, key, [m]);
        if (!fits(messageLine(whole!))) {
          return { text: chunks.join(""), next: { ...(read ? { after: read } : {}), last: lastId!, messages, version } };
        }
        messages++;
        lastId = m.id;
      }
      after = page.nextCursor;
    } while (after && bytes < limits.pageBytes);
    if (after) return { text: chunks.join(""), next: { after, messages, version } };
  }

  // Memories are few beside messages (one per fold): read in one listing, paged like the messages.
  const memories = await deps.store.listMemories(key);
  for (let i = from?.memories ?? 0; i < memories.length; i++) {
    // A block kept as a blob goes whole into the line, as a message's native content does.
    if (!fits(memoryLine(await withBlock(deps, key, memories[i]!)))) return { text: chunks.join(""), next: { messages, memories: i, version } };
  }
  const overrides = await deps.store.getSettings(key.tenantId, state.process.projectId);
  const last = `${overrides ? settingsLine(state.process.projectId, overrides) : ""}${endLine(messages, memories.length)}`;
  if (!fits(last)) return { text: chunks.join(""), next: { messages, memories: memories.length, version } };
  return { text: chunks.join("") };
}
