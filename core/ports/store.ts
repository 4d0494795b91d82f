/**
 * The Store port, one interface per aggregate (processes, settings, messages, memories, the commit
 * protocol, inbox) and `Store` as all of them. The DynamoDB adapter implements each against one
 * table (core/adapters/dynamodb); expected conflicts come back as `{ ok: false, reason }`.
 */
import type { ClearedResult, InboxItem, InboxStatus, Memory, Message, Page, Process } from "../domain/model.js";
import type { ErasureStore } from "./erasure-store.js";
import type { ImportStore } from "./import-store.js";
import type { LastTurn } from "../domain/last-turn.js";
import type { EpochReason } from "../domain/prefix.js";
import type { CompactionCommit, RevertCommit } from "./compaction-commit.js";

export type { CompactionCommit, RevertCommit } from "./compaction-commit.js";

/**
 * Single-item writes in flight at once when one change spans more items than a transaction holds
 * (archiving, restoring, clearing, retagging): the store and the services use the same bound.
 */
export const WRITE_CONCURRENCY = 16;

export interface ProcessKey {
  tenantId: string;
  processId: string;
}

/** The META record of a process: its public fields plus the compaction bookkeeping. */
export interface ProcessState {
  process: Process;
  /** Bumped by every committed compaction; a lease is only granted for the version it read. */
  version: number;
  activeSummaryId: string | null;
  lease: { owner: string; until: string } | null;
  /** A committed memory whose sourceRefs are not all archived yet (roll forward first). */
  pendingArchive: string | null;
  /** Whether a USER message was ever appended (auto-pin applies to the first one only). */
  hasUserMessage: boolean;
  /**
   * After an undo: automatic SOFT and HARD folds wait until the replay (our estimate) reaches
   * this many tokens (docs/compaction.md, "Undoing a compaction"). Absent when no hold is set.
   */
  revertHoldTokens?: number;
  /** The record of the process's last turn (docs/turns.md, "The last turn's record"); absent before the first. */
  lastTurn?: LastTurn;
  /** Moved with its reason by a fold's commit or an undo (docs/turns.md, "Append-only between folds"). */
  replayEpoch: number;
  replayReason?: EpochReason;
}

/** What one strongly consistent Query over the sparse index returns. */
export interface ActiveView {
  state: ProcessState;
  /** Active OK summaries, oldest first: normally zero or one. Their `sourceRefs` are not read. */
  summaries: Memory[];
  /** Queued and prepared folds (never replayed), oldest first: normally zero or one. No `sourceRefs`. */
  folds: Memory[];
  /** Active (unarchived) messages, oldest first. */
  messages: Message[];
  /** Results cleared for a later replay epoch, shown whole until then (set by settledView). */
  waitingClears?: string[];
  /** Read capacity the Query consumed, when the store reports it. */
  consumedCapacity?: number;
  itemsRead?: number;
}

export type ProcessInput = Omit<Process, "createdAt" | "allowsCrossProjectSpawn"> & {
  allowsCrossProjectSpawn?: boolean;
};

export type Outcome<R extends string, T = object> = ({ ok: true } & T) | { ok: false; reason: R };

/** What a roll-forward did itself: how many messages it moved, and the originals it found missing. */
export interface RollForwardResult {
  archived: number;
  /** Originals of the memory no step could move because they are not stored (never expected: reported, not skipped silently). */
  missing: string[];
}

export interface ListOptions {
  limit: number;
  cursor?: string;
}

/** Processes: the public fields of the META item (docs/api.md, "HTTP API"). */
export interface ProcessStore {
  upsertProcess(tenantId: string, input: ProcessInput, at: string): Promise<Process>;
  getProcess(key: ProcessKey): Promise<ProcessState | null>;
  /** Replaces the last turn's record; false when the process is gone or deleted. */
  recordTurn(key: ProcessKey, record: LastTurn): Promise<boolean>;
  listProcesses(
    tenantId: string,
    options: ListOptions & { projectId?: string },
  ): Promise<Page<Process>>;
}

/** Tunables overrides per tenant or project. */
export interface SettingsStore {
  /** Tunables overrides of a tenant (no project) or of one project; null when none are stored. */
  getSettings(tenantId: string, projectId?: string): Promise<Record<string, unknown> | null>;
  putSettings(tenantId: string, projectId: string | undefined, settings: Record<string, unknown>, at: string): Promise<void>;
}

/**
 * Messages, and the replay read that returns them with the active summary. Every write of this
 * port and of MemoryStore and CompactionStore rejects with `store.item_too_large`
 * (core/domain/errors.ts) when an item would outgrow what the store holds, except where a method
 * says it skips such an item.
 */
export interface MessageStore {
  /** True when the process already has a USER message (the auto-pin existence check, one GetItem). */
  hasUserMessage(key: ProcessKey): Promise<boolean>;
  /**
   * Appends a message to an existing process (`not_found` otherwise). With an idempotency key, a
   * repeat returns the first message and `created: false`; a repeat whose `bodyHash` differs from
   * the one stored with the key is `idempotency_key_reused`. `lastTurn`: the turn's record, written
   * in the same transaction (a repeat writes nothing).
   */
  appendMessage(
    key: ProcessKey,
    message: Message,
    idempotencyKey?: string,
    bodyHash?: string,
    lastTurn?: LastTurn,
  ): Promise<Outcome<"process_not_found" | "idempotency_key_reused", { message: Message; created: boolean }>>;
  /** Every message, archived included, oldest first. */
  listMessages(key: ProcessKey, options: ListOptions): Promise<Page<Message>>;
  getMessages(key: ProcessKey, ids: string[]): Promise<Message[]>;
  /** One message, archived or not (strongly consistent); null when the process has no such message. */
  getMessage(key: ProcessKey, messageId: string): Promise<Message | null>;
  /**
   * Replaces the tags of an active message if they are still `expectedTags`, and bumps META.version
   * in the same transaction so that a compaction that read the old tags cannot commit.
   * `pending_archive`: a roll-forward is unfinished (finish it, then retry).
   */
  updateMessageTags(
    key: ProcessKey,
    messageId: string,
    change: { tags: string[]; expectedTags: string[] },
  ): Promise<Outcome<"not_found" | "archived" | "tags_changed" | "pending_archive">>;
  /**
   * Like {@link Store.updateMessageTags} but one conditional write that leaves META.version alone:
   * for the strength analyzer's advisory tags (docs/compaction.md, "Strength analyzer"), which no
   * in-flight fold or queued fold has to be refused over. Condition: the message is active and its
   * tags are still `expectedTags`, so a caller's PATCH in between always wins.
   */
  retagMessage(
    key: ProcessKey,
    messageId: string,
    change: { tags: string[]; expectedTags: string[] },
  ): Promise<Outcome<"not_found" | "archived" | "tags_changed">>;
  /** META + active summary + active messages in one strongly consistent Query. */
  activeView(key: ProcessKey): Promise<ActiveView | null>;
  /**
   * Conditional and idempotent: an already archived message is skipped, never re-pointed. With
   * `expiresAtEpoch` (the memory's `originalsExpiry`), each archive carries the TTL attribute.
   */
  markArchived(
    key: ProcessKey,
    messageIds: string[],
    memoryId: string,
    expiresAtEpoch?: number,
  ): Promise<{ archived: string[]; skipped: string[] }>;

  /**
   * Clears TOOL results from the replay (docs/compaction.md, "Tool-result clearing"): records
   * `cleared` and the placeholder's `tokens` on each message, content untouched. Conditional and
   * idempotent: a message already cleared, archived or missing, or whose tags are no longer
   * `expectedTags` (a PATCH changed its strength since it was read), is skipped; so is one the
   * store cannot grow by the placeholder's fields (stored under an earlier, larger size limit).
   */
  markCleared(
    key: ProcessKey,
    items: ReadonlyArray<{ id: string; cleared: ClearedResult; tokens: number; expectedTags: string[] }>,
  ): Promise<{ cleared: string[]; skipped: string[] }>;
}

/** Memories: summaries, failures, reverted folds and background folds. */
export interface MemoryStore {
  putMemory(key: ProcessKey, memory: Memory): Promise<void>;
  /**
   * Writes a background fold (QUEUED, PREPARED, or FAILED when its summary failed): `new` puts it
   * only if the id is free, otherwise only while the stored row still has status `expect`.
   */
  storeFold(key: ProcessKey, fold: Memory, expect: "new" | "QUEUED"): Promise<Outcome<"status_changed">>;
  /**
   * Replaces a PREPARED fold with its extension (same id, still PREPARED): only while it is
   * PREPARED and not extended yet, and META is at `version` with its lease held by `owner`.
   */
  extendFold(key: ProcessKey, fold: Memory, o: { owner: string; version: number }): Promise<Outcome<"status_changed">>;
  /**
   * QUEUED or PREPARED -> DISCARDED (out of the replay index), with the reason; only while the
   * fold still has status `from` (the one its discarder read).
   */
  discardFold(key: ProcessKey, foldId: string, from: "QUEUED" | "PREPARED", reason: string, at: string): Promise<Outcome<"status_changed">>;
  getMemory(key: ProcessKey, memoryId: string): Promise<Memory | null>;
  /**
   * Notes on a memory that holds a provider's block that the provider refused it (`metadata.providerFold.refused`):
   * only while the memory exists and holds a block not noted yet (false otherwise).
   */
  markBlockRefused(key: ProcessKey, memoryId: string, refused: { at: string; error?: string }): Promise<boolean>;
  /** Every memory of the process, newest first. */
  listMemories(key: ProcessKey): Promise<Memory[]>;
  /** Conditional: a superseded memory is never superseded again. */
  supersede(
    key: ProcessKey,
    oldId: string,
    newId: string,
    at: string,
  ): Promise<Outcome<"already_superseded" | "not_found">>;
}

/** The commit protocol (docs/compaction.md, "The commit protocol"): lease, commit, undo, roll-forward. */
export interface CompactionStore {
  /**
   * Granted when no live lease exists and META still has `expectedVersion`. With `replayTokens`
   * (an automatic compaction), also only when no revert hold above that count is recorded.
   */
  acquireLease(
    key: ProcessKey,
    lease: { owner: string; until: string; now: string; expectedVersion: number; replayTokens?: number },
  ): Promise<Outcome<"leased" | "version_changed" | "not_found" | "revert_hold">>;
  releaseLease(key: ProcessKey, owner: string): Promise<void>;
  /** One transaction: memory + META + supersede + as many archives as fit; the rest are pending. */
  commitCompaction(
    key: ProcessKey,
    commit: CompactionCommit,
  ): Promise<Outcome<"conflict", { pendingArchive: boolean }>>;
  /** One transaction: REVERTED memory + META + prior summary + marker + as many restores as fit. */
  revertCompaction(key: ProcessKey, commit: RevertCommit): Promise<Outcome<"conflict", { pendingArchive: boolean }>>;
  /**
   * Finishes the roll-forward META names: archives what an OK memory's fold still lacks, or, for a
   * REVERTED memory, restores what its revert still lacks; then clears the pending marker.
   */
  finishPendingArchive(key: ProcessKey, memoryId: string): Promise<RollForwardResult>;
}

/** Plan-completion offers awaiting an answer (docs/api.md, "HTTP API"). */
export interface InboxStore {
  /** Conditional on the id: a second put of the same id returns the existing item. */
  putInboxItem(
    tenantId: string,
    item: InboxItem,
  ): Promise<{ created: true; item: InboxItem } | { created: false; item: InboxItem }>;
  getInboxItem(tenantId: string, itemId: string): Promise<InboxItem | null>;
  listInbox(
    tenantId: string,
    filter: { processId?: string; status?: InboxStatus },
  ): Promise<InboxItem[]>;
  /** OPEN -> ACCEPTED/DECLINED once. */
  answerInboxItem(
    tenantId: string,
    itemId: string,
    status: "ACCEPTED" | "DECLINED",
    at: string,
  ): Promise<Outcome<"not_open" | "not_found", { item: InboxItem }>>;
  /**
   * Records `jobId` as the item's range job unless one is recorded already (conditional, once);
   * answers the job id in force: `jobId`, or the one recorded first.
   */
  claimRangeJob(tenantId: string, itemId: string, jobId: string): Promise<Outcome<"not_found", { jobId: string }>>;
}

/** A tenant's model usage on one UTC day (docs/reliability.md, "Limits, budgets and rates"). */
export interface DailyUsage {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  /**
   * Tokens counted against the budget: each fold's upper estimate while it runs, corrected to what
   * its calls used once it has run.
   */
  tokens: number;
  /** Summarizer and strength-analyzer calls made. */
  calls: number;
  /** Tokens the calls used, as the provider reported them (else the service's estimate). */
  inputTokens: number;
  outputTokens: number;
}

/** The daily model budget the operator set for a tenant: tokens per UTC day, or `unlimited`. */
export type TenantBudget = number | "unlimited";

/** Per-tenant model usage per day and the budget the operator set (never written by a tenant). */
export interface UsageStore {
  /** The tenant's own budget; null when none is set (the deployment's default applies). */
  getTenantBudget(tenantId: string): Promise<TenantBudget | null>;
  /** Sets the tenant's budget; null removes it. */
  putTenantBudget(tenantId: string, budget: TenantBudget | null, at: string): Promise<void>;
  /** The day's usage; zeros when nothing was used. Strongly consistent. */
  getUsage(tenantId: string, day: string): Promise<DailyUsage>;
  /**
   * Adds `tokens` to the day's count only while the count stays at most `limit`: one conditional
   * ADD, so two containers reserving at once cannot both pass the limit.
   */
  reserveTokens(tenantId: string, day: string, tokens: number, limit: number): Promise<Outcome<"over_budget">>;
  /** Adds to the day's counters (a negative `tokens` gives back an unused reservation). */
  addUsage(tenantId: string, day: string, add: Partial<Omit<DailyUsage, "day">>): Promise<void>;
}

export type { DeletionStatus, ErasureStore } from "./erasure-store.js";
export { TENANT_ERASURE_MARK_DAYS } from "./erasure-store.js";

/**
 * Everything the services persist: the aggregate ports together. A service names the ones it uses.
 * The import port is apart (`ImportingStore`): only the functions that import carry its code.
 */
export type Store = ProcessStore &
  SettingsStore &
  MessageStore &
  MemoryStore &
  CompactionStore &
  InboxStore &
  UsageStore &
  ErasureStore;

/** The store of the functions that import a process (the summarizing routes, the scripts, the local runner). */
export type ImportingStore = Store & ImportStore;

/** The store as an importing one, or an internal error naming what is missing: the plain routes' store cannot import. */
export function importingStore(store: Store): ImportingStore {
  if (!("putImportedItems" in store)) throw new Error("this function's store has no import port (core/ports/import-store.ts)");
  return store as ImportingStore;
}
