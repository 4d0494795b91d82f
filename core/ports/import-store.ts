/**
 * The import port (docs/api.md, "Export and import"), part of the Store (store.ts). A module of
 * its own that imports nothing of store.ts, so the two never form a cycle.
 */
import type { Memory, Message, Process } from "../domain/model.js";

/** What an imported process's META records (docs/api.md, "Export and import"). */
export interface ImportedProcess {
  process: Process;
  activeSummaryId: string | null;
  /** The first USER message, for the auto-pin's existence check; null when there is none. */
  firstUserMessageId: string | null;
}

/** Restoring an export into a new process id (docs/api.md, "Export and import"). */
export interface ImportStore {
  /**
   * Creates the META of an imported process at version 0, only if the id was never used:
   * `exists` for a live process, `deleted` for a tombstone (a deleted id is never used again).
   */
  createImportedProcess(tenantId: string, imported: ImportedProcess): Promise<{ ok: true } | { ok: false; reason: "exists" | "deleted" }>;
  /**
   * Writes messages and memories exactly as given, in transactions each guarded by the process
   * being live and each item being new: once the process is deleted, no further batch gets in (`deleted`).
   */
  putImportedItems(
    key: { tenantId: string; processId: string },
    items: { messages: Message[]; memories: Memory[] },
  ): Promise<{ ok: true } | { ok: false; reason: "deleted" }>;
}
