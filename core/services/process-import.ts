/**
 * Importing an export into a new process id (docs/api.md, "Export and import"): a first pass
 * validates every line and the file as a whole against the stored-data invariants
 * (core/domain/process-export.ts), so a bad file writes nothing; then a hidden META is created
 * (only for an id never used, a deleted one included), a second pass writes the messages and
 * memories in transactions, each refused once the process is deleted, and one last update makes
 * the process live: until then no reader, listing, turn or fold sees it. Two passes over
 * the lines, so that neither holds the file's messages: the HTTP body is one text already, a file
 * given to `npm run processes -- import` is read twice from disk. A message's native content is
 * kept as an append keeps it: its large parts put as blobs of the new process, its hash stored.
 */
import { AppError, conflict, invalid, notFound, processDeleted } from "../domain/errors.js";
import { setStoredNative, type Memory, type Message, type Process } from "../domain/model.js";
import { splitBlock } from "../domain/native/memory-block.js";
import { exportLines, MAX_IMPORT_ITEMS, relocate, scanExport, type ExportOutline, type IdSource } from "../domain/process-export.js";
import { DEFAULT_IMPORTS_PER_MINUTE } from "../domain/rate-limit.js";
import { importingStore, type ImportingStore, type ProcessKey } from "../ports/store.js";
import type { ServiceDeps } from "./deps.js";
import { keepBlock, keepNative } from "./native-content.js";
import { readStoredOverride } from "./tunables.js";

export interface ImportResult {
  process: Process;
  messages: number;
  memories: number;
  /**
   * The file's settings line: `restored` as the project's override, `kept` where the project
   * already has one (settings are shared by the project's processes), `refused` where it does not
   * fit the tenant's settings (logged with the reason), `none` without a settings line.
   */
  settings: "restored" | "kept" | "refused" | "none";
}

/** An export's lines, readable more than once (each call starts from the first line). */
export type ExportSource = () => Iterable<string> | AsyncIterable<string>;

/** Items handed to the store at once: ten of its transactions (99 items and the live check each). */
export const IMPORT_BATCH_ITEMS = 990;

/** Imports an export held as one text (the HTTP body), of at most MAX_IMPORT_ITEMS messages and memories. */
export function importProcess(deps: ServiceDeps, key: ProcessKey, text: string, options: { remapIds: boolean }): Promise<ImportResult> {
  return importExport(deps, key, () => exportLines(text), { ...options, maxItems: MAX_IMPORT_ITEMS });
}

export interface ImportOptions {
  remapIds: boolean;
  /** Most messages and memories together; unset: any number (the command-line import). */
  maxItems?: number;
}

/**
 * Imports an export read line by line: at most IMPORT_BATCH_ITEMS messages are held at a time,
 * besides the outline (every id, and the memories). The source must give the same lines on both
 * passes; one that does not is refused as soon as a line of the second pass differs from what the
 * first validated, with what was written by then left for a delete.
 */
export async function importExport(deps: ServiceDeps, key: ProcessKey, source: ExportSource, options: ImportOptions): Promise<ImportResult> {
  const outline = await scan(source, options.remapIds ? newIds(deps) : undefined);
  const items = outline.messageIds.size + outline.memories.length;
  if (options.maxItems !== undefined && items > options.maxItems) {
    throw new AppError("too_large", "import.too_many_items", `the export holds ${items} messages and memories; an import takes at most ${options.maxItems}`, {
      items,
      limit: options.maxItems,
    });
  }
  // Refused before anything is written, rather than at the first message with a large part.
  if ((outline.blobMessages > 0 || outline.memories.some((m) => m.native && "blob" in splitBlock(m.native))) && !deps.blobs) {
    throw new AppError("internal", "blobs.unconfigured", "the export has native content kept as blobs and no blob store is configured");
  }
  const store = importingStore(deps.store);
  // Taken before anything is written: the rate protects the table's capacity (the command-line
  // import, the operator's, is not counted).
  if (options.maxItems !== undefined) await takeImportSlot(deps, store, key.tenantId);
  const at = deps.clock.now().toISOString();
  const moved = relocate(outline, key.processId, at);
  // The import's own mark on its hidden META: only its batches and its last update get past it.
  const token = deps.ids.token();
  const created = await store.createImportedProcess(key.tenantId, moved.process, token);
  if (!created.ok) {
    if (created.reason === "deleted") throw processDeleted(key.processId);
    throw conflict("process.exists", `process '${key.processId}' exists; an export is imported into a new process id`);
  }

  const again = scanExport();
  let messages: Message[] = [];
  let memories: Memory[] = [];
  const written = { messages: 0, memories: 0 };
  const flush = async () => {
    if (messages.length + memories.length === 0) return;
    const put = await store.putImportedItems(key, token, { messages, memories });
    // Deleted while it was written: the deletion erases what got in.
    if (!put.ok) throw notFound("process", key.processId);
    written.messages += messages.length;
    written.memories += memories.length;
    messages = [];
    memories = [];
  };
  for await (const text of source()) {
    const entry = again.line(text);
    if (entry.kind === "message") {
      if (!outline.messageIds.has(entry.message.id)) throw changed(entry.message.id);
      messages.push(await imported(deps, key, moved.message(entry.message)));
    } else if (entry.kind === "memory") {
      if (!outline.memoryIds.has(entry.memory.id)) throw changed(entry.memory.id);
      // A block past the inline size is put as a blob before the memory's item names it.
      memories.push(await keepBlock(deps, key, moved.memory(entry.memory)));
    }
    if (messages.length + memories.length >= IMPORT_BATCH_ITEMS) await flush();
  }
  again.finish();
  await flush();
  if (written.messages !== outline.messageIds.size || written.memories !== outline.memories.length) {
    throw changed(`${written.messages} messages and ${written.memories} memories`);
  }
  const live = await store.activateImportedProcess(key, token, {
    process: moved.process,
    activeSummaryId: moved.activeSummaryId,
    firstUserMessageId: moved.firstUserMessageId,
  });
  if (!live.ok) throw notFound("process", key.processId);
  const settings = outline.settings ? await restoreSettings(deps, key.tenantId, outline.settings) : "none";
  deps.log.info("process imported", {
    processId: key.processId,
    from: outline.header.processId,
    ...written,
    settings,
  });
  return { process: moved.process, ...written, settings };
}

/** One of the tenant's imports of this minute, or a 429 naming when the next may start. */
async function takeImportSlot(deps: ServiceDeps, store: ImportingStore, tenantId: string) {
  const perMinute = deps.importsPerMinute ?? DEFAULT_IMPORTS_PER_MINUTE;
  const slot = await store.takeImportSlot(tenantId, deps.clock.now().getTime(), perMinute);
  if (slot.ok) return;
  throw new AppError("too_many_requests", "import.rate_limited", `more than ${slot.limit} imports per minute for this tenant; retry after ${slot.retryAfterSeconds} s`, {
    limit: slot.limit,
    retryAfterSeconds: slot.retryAfterSeconds,
  });
}

/**
 * The project's override from the file, where the project has none: checked as a stored item is
 * read (a field that no longer validates is left out) and saved as `PUT /v1/settings` saves it,
 * against the tenant's own settings and limits; the summarizer's window is not checked, as an
 * import needs no summarizer (the command-line import has none).
 */
async function restoreSettings(deps: ServiceDeps, tenantId: string, line: NonNullable<ExportOutline["settings"]>): Promise<ImportResult["settings"]> {
  if (await deps.store.getSettings(tenantId, line.projectId)) return "kept";
  try {
    await deps.tunables.save(tenantId, line.projectId, readStoredOverride(line.overrides).override, deps.clock.now().toISOString());
    return "restored";
  } catch (e) {
    if (!(e instanceof AppError) || e.kind !== "input") throw e;
    deps.log.warn("imported settings refused", { tenantId, projectId: line.projectId, reason: e.message });
    return "refused";
  }
}

/** The message as the store keeps it: native content split into the item's part and its blobs. */
async function imported(deps: ServiceDeps, key: ProcessKey, m: Message): Promise<Message> {
  const { native, ...rest } = m;
  return native ? setStoredNative(rest, await keepNative(deps, key, native)) : rest;
}

async function scan(source: ExportSource, ids: IdSource | undefined): Promise<ExportOutline> {
  const scanner = scanExport(ids);
  for await (const text of source()) scanner.line(text);
  return scanner.finish();
}

const changed = (what: string) =>
  invalid("import.changed", `the export changed while it was imported (${what} not as first read); delete the process and import again`, { fields: ["body"] });

/** New ids at each item's own creation time (an unreadable time: now), so they sort as the old ones. */
function newIds(deps: ServiceDeps): IdSource {
  const at = (iso: string) => {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? deps.clock.now() : d;
  };
  return { message: (createdAt) => deps.ids.message(at(createdAt)), memory: (createdAt) => deps.ids.memory(at(createdAt)) };
}
