/**
 * Importing an export into a new process id (docs/api.md, "Export and import"): the whole file is
 * parsed and validated first (core/domain/process-export.ts), so a bad file writes nothing; then
 * META is created (only for an id never used, a deleted one included) and the messages and
 * memories are written in transactions, each refused once the process is deleted.
 */
import { conflict, notFound, processDeleted } from "../domain/errors.js";
import { parseExport, relocateExport, type IdSource } from "../domain/process-export.js";
import type { Process } from "../domain/model.js";
import type { ProcessKey } from "../ports/store.js";
import type { ServiceDeps } from "./deps.js";

export interface ImportResult {
  process: Process;
  messages: number;
  memories: number;
}

export async function importProcess(deps: ServiceDeps, key: ProcessKey, text: string, options: { remapIds: boolean }): Promise<ImportResult> {
  const parsed = parseExport(text);
  const moved = relocateExport(parsed, key.processId, options.remapIds ? newIds(deps) : undefined);
  const firstUser = moved.messages.find((m) => m.role === "USER");
  const created = await deps.store.createImportedProcess(key.tenantId, {
    process: moved.process,
    activeSummaryId: moved.activeSummaryId,
    firstUserMessageId: firstUser?.id ?? null,
  });
  if (!created.ok) {
    if (created.reason === "deleted") throw processDeleted(key.processId);
    throw conflict("process.exists", `process '${key.processId}' exists; an export is imported into a new process id`);
  }
  const written = await deps.store.putImportedItems(key, { messages: moved.messages, memories: moved.memories });
  // Deleted while it was written: the deletion erases what got in.
  if (!written.ok) throw notFound("process", key.processId);
  deps.log.info("process imported", {
    processId: key.processId,
    from: parsed.header.processId,
    messages: moved.messages.length,
    memories: moved.memories.length,
  });
  return { process: moved.process, messages: moved.messages.length, memories: moved.memories.length };
}

/** New ids at each item's own creation time (an unreadable time: now), so they sort as the old ones. */
function newIds(deps: ServiceDeps): IdSource {
  const at = (iso: string) => {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? deps.clock.now() : d;
  };
  return { message: (createdAt) => deps.ids.message(at(createdAt)), memory: (createdAt) => deps.ids.memory(at(createdAt)) };
}
