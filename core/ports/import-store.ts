/**
 * The import port (docs/api.md, "Export and import"), part of the Store (store.ts). A module of
 * its own that imports nothing of store.ts, so the two never form a cycle.
 */
import type { Memory, Message, Process } from "../domain/model.js";
import type { RateDecision } from "../domain/rate-limit.js";

/** What an imported process's META records once it is live (docs/api.md, "Export and import"). */
export interface ImportedProcess {
  process: Process;
  activeSummaryId: string | null;
  /** The first USER message, for the auto-pin's existence check; null when there is none. */
  firstUserMessageId: string | null;
}

type ProcessKey = { tenantId: string; processId: string };

/**
 * Restoring an export into a new process id, in one step seen from outside: META is created
 * hidden, marked with the import's `token` (no reader finds it, no listing shows it, no write but
 * the import's own and a DELETE gets in), the items are written, and one conditional update makes
 * the process live. An import that stops before that stays hidden, and a DELETE erases it.
 */
export interface ImportStore {
  /**
   * Creates the hidden META of an import at version 0, only if the id was never used: `exists`
   * for a process (live, or another import's), `deleted` for a tombstone (a deleted id is never
   * used again).
   */
  createImportedProcess(tenantId: string, process: Process, token: string): Promise<{ ok: true } | { ok: false; reason: "exists" | "deleted" }>;
  /**
   * Writes messages and memories exactly as given, in transactions each guarded by META still
   * carrying `token` and each item being new: once the process is deleted, no further batch gets
   * in (`deleted`).
   */
  putImportedItems(key: ProcessKey, token: string, items: { messages: Message[]; memories: Memory[] }): Promise<{ ok: true } | { ok: false; reason: "deleted" }>;
  /** The one update that makes the import live, while META still carries `token` (`deleted` otherwise). */
  activateImportedProcess(key: ProcessKey, token: string, imported: ImportedProcess): Promise<{ ok: true } | { ok: false; reason: "deleted" }>;
  /** Takes one of the tenant's imports of the current minute, or refuses once `perMinute` are taken. */
  takeImportSlot(tenantId: string, nowMs: number, perMinute: number): Promise<RateDecision>;
}
