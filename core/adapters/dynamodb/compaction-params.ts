/**
 * Pure DynamoDB inputs of the compaction aggregate: memories and background folds, the lease, and
 * the commit protocol's transactions (docs/compaction.md, "The commit protocol" and "Undoing a
 * compaction"). Nothing here sends: tests assert the whole input.
 */
import type { GetCommandInput, QueryCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { Memory } from "../../domain/model.js";
import type { EpochReason } from "../../domain/prefix.js";
import type { LastTurn } from "../../domain/last-turn.js";
import { originalsExpiry } from "../../domain/retention.js";
import type { CompactionCommit, ProcessKey, RevertCommit } from "../../ports/store.js";
import {
  LAST_TURN_ATTRIBUTE,
  REVERT_HOLD_ATTRIBUTE,
  REVERT_HOLD_MAP,
  guarded,
  itemExists,
  itemIsNew,
  leaseFree,
  leaseHeldBy,
  noPendingArchive,
  notDeleted,
  notSuperseded,
  pendingArchiveFromIs,
  pendingArchiveIs,
  processLive,
  revertHoldAtMost,
  statusIs,
  supersededBy,
  versionIs,
  when,
  type Part,
} from "./conditions.js";
import { memoryToItem, messageToItem } from "./items.js";
import { rollForwardMarker, type RollForwardDirection } from "./roll-forward-marker.js";
import { META_SK, MEMORY_PREFIX, TTL_ATTRIBUTE, activeMemoryKey, memorySk, processPk } from "./keys.js";
import { archiveUpdate, restoreUpdate } from "./message-params.js";
import { TRANSACTION_LIMIT } from "./transact.js";

const metaKey = (key: ProcessKey) => ({ pk: processPk(key), sk: META_SK });
const memoryKey = (key: ProcessKey, id: string) => ({ pk: processPk(key), sk: memorySk(id) });

export const getMemoryParams = (tableName: string, key: ProcessKey, memoryId: string): GetCommandInput => ({
  TableName: tableName,
  Key: memoryKey(key, memoryId),
  ConsistentRead: true,
});

/** Every memory of the process, newest first. */
export const listMemoriesParams = (tableName: string, key: ProcessKey): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: "pk = :pk AND begins_with(sk, :s)",
  ExpressionAttributeValues: { ":pk": processPk(key), ":s": MEMORY_PREFIX },
  ScanIndexForward: false,
  ConsistentRead: true,
});

/**
 * META's guard for a write that adds an item to a process without touching META: the process
 * exists and is not deleted (docs/api.md, "Deleting a process"), so no write recreates an item
 * of a deleted process.
 */
export const processLiveCheck = (tableName: string, key: ProcessKey): Part<"process"> => [
  "process",
  { ConditionCheck: { TableName: tableName, Key: metaKey(key), ...when(processLive) } },
];

/** A memory is written once, while the process is live. */
export const putMemoryParts = (tableName: string, key: ProcessKey, memory: Memory): Part<"process" | "memory">[] => [
  processLiveCheck(tableName, key),
  ["memory", { Put: { TableName: tableName, Item: memoryToItem(key, memory), ...when(itemIsNew()) } }],
];

/**
 * A background fold: `new` only if its id is free, otherwise only while it still has status
 * `expect`; either only while the process is live.
 */
export const storeFoldParts = (tableName: string, key: ProcessKey, fold: Memory, expect: "new" | "QUEUED"): Part<"process" | "memory">[] => [
  processLiveCheck(tableName, key),
  ["memory", { Put: { TableName: tableName, Item: memoryToItem(key, fold), ...when(expect === "new" ? itemIsNew() : statusIs(expect)) } }],
];

/** A fold is extended once. */
const notExtended = { expression: "attribute_not_exists(metadata.#extended)", names: { "#extended": "extended" } };

/**
 * A PREPARED fold extended in place (docs/compaction.md, "Who commits a prepared fold"): only
 * while it is still PREPARED and not extended yet, and while META is still at the version the
 * extension read with its lease held by the extender, so a commit, a pin or a strength change
 * made meanwhile refuses it and the fold stays as it was prepared.
 */
export const extendFoldParts = (
  tableName: string,
  key: ProcessKey,
  fold: Memory,
  o: { owner: string; version: number },
): Part<"process" | "memory">[] => [
  ["process", { ConditionCheck: { TableName: tableName, Key: metaKey(key), ...when(processLive, versionIs(o.version), leaseHeldBy(o.owner)) } }],
  ["memory", { Put: { TableName: tableName, Item: memoryToItem(key, fold), ...when(statusIs("PREPARED"), notExtended) } }],
];

/**
 * QUEUED or PREPARED -> DISCARDED, out of the replay index, with the reason: only while the fold
 * still has the status its discarder read (`from`), so a late reader of a QUEUED row never
 * discards the fold another delivery prepared since. The TTL attribute goes too: a discarded
 * fold stays, with its reason, for `GET .../memories?includeFailed=true` (docs/api.md).
 */
export const discardFoldParams = (
  tableName: string,
  key: ProcessKey,
  foldId: string,
  from: "QUEUED" | "PREPARED",
  reason: string,
  at: string,
): UpdateCommandInput =>
  guarded(
    { TableName: tableName, Key: memoryKey(key, foldId) },
    {
      expression: "SET #status = :d, metadata.discardReason = :r, metadata.discardedAt = :at REMOVE lsi1sk, #ttl",
      names: { "#ttl": TTL_ATTRIBUTE },
      values: { ":d": "DISCARDED", ":r": reason, ":at": at },
    },
    statusIs(from),
  );

/** Supersede of one summary by `newId`: a superseded memory is never superseded again. */
export function supersedeUpdate(tableName: string, key: ProcessKey, oldId: string, newId: string, at: string): UpdateCommandInput {
  return guarded(
    { TableName: tableName, Key: memoryKey(key, oldId) },
    { expression: "SET supersededAt = :at, supersededByMemoryId = :n REMOVE lsi1sk", values: { ":at": at, ":n": newId } },
    itemExists(),
    notSuperseded,
  );
}

/**
 * The compaction lease on META: only for the version the caller read, while no live lease exists
 * and, for an automatic compaction (`replayTokens`), no revert hold above that count is recorded.
 */
export function acquireLeaseParams(
  tableName: string,
  key: ProcessKey,
  lease: { owner: string; until: string; now: string; expectedVersion: number; replayTokens?: number },
): UpdateCommandInput {
  const hold = lease.replayTokens !== undefined ? [revertHoldAtMost(lease.replayTokens)] : [];
  return guarded(
    { TableName: tableName, Key: metaKey(key), ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
    { expression: "SET leaseOwner = :o, leaseUntil = :u", values: { ":o": lease.owner, ":u": lease.until } },
    processLive,
    versionIs(lease.expectedVersion),
    leaseFree(lease.now),
    ...hold,
  );
}

/** Releases only our own lease (an expired one someone else took is left alone). */
export const releaseLeaseParams = (tableName: string, key: ProcessKey, owner: string): UpdateCommandInput =>
  guarded({ TableName: tableName, Key: metaKey(key) }, { expression: "REMOVE leaseOwner, leaseUntil" }, leaseHeldBy(owner));

/** Items of a roll-forward transaction besides its messages: META's marker and the memory's status. */
export const ROLL_FORWARD_GUARDS = 2;

export type RollForwardPart = "process" | "memory" | `message:${string}`;

/**
 * One step of a roll-forward, in one transaction (docs/compaction.md, "The commit protocol"): the
 * messages `ids` (those from index `from` of the memory's sourceRefs) archived into the memory or
 * restored from it; META's marker moved on to the next index, or removed after the `last` step;
 * all only while the marker is still `marker` at `from` and the memory still has the status the
 * direction serves (OK to archive, REVERTED to restore). A walker that stalled while others
 * finished, or while an undo reversed the direction, fails here and writes nothing.
 */
export function rollForwardParts(
  tableName: string,
  key: ProcessKey,
  step: {
    marker: string;
    memoryId: string;
    direction: RollForwardDirection;
    from: number;
    ids: readonly string[];
    next: number;
    last: boolean;
    at: string;
    /** The memory's originals' expiry (archive only), as its commit wrote it on the first ones. */
    expiresAtEpoch?: number | undefined;
  },
): Part<RollForwardPart>[] {
  const meta = guarded(
    { TableName: tableName, Key: metaKey(key) },
    step.last
      ? { expression: "REMOVE pendingArchive, pendingArchiveFrom" }
      : { expression: "SET pendingArchiveFrom = :next", values: { ":next": step.next } },
    pendingArchiveIs(step.marker),
    pendingArchiveFromIs(step.from),
    notDeleted,
  );
  const memory = {
    ConditionCheck: {
      TableName: tableName,
      Key: memoryKey(key, step.memoryId),
      ...when(statusIs(step.direction === "archive" ? "OK" : "REVERTED")),
    },
  };
  const messages = step.ids.map((id): Part<RollForwardPart> => [
    `message:${id}`,
    {
      Update:
        step.direction === "archive"
          ? archiveUpdate(tableName, key, id, step.memoryId, step.at, step.expiresAtEpoch)
          : restoreUpdate(tableName, key, id, step.memoryId),
    },
  ]);
  return [["process", { Update: meta }], ["memory", memory], ...messages];
}

/**
 * Archives into an OK memory outside a roll-forward (a repeated roll-forward delivered late): the
 * messages, only while the memory is still OK, so a late writer never re-folds what an undo restored.
 */
export function archiveIntoOkParts(
  tableName: string,
  key: ProcessKey,
  memoryId: string,
  ids: readonly string[],
  at: string,
  expiresAtEpoch?: number,
): Part<RollForwardPart>[] {
  const memory = { ConditionCheck: { TableName: tableName, Key: memoryKey(key, memoryId), ...when(statusIs("OK")) } };
  return [
    ["memory", memory],
    ...ids.map((id): Part<RollForwardPart> => [`message:${id}`, { Update: archiveUpdate(tableName, key, id, memoryId, at, expiresAtEpoch) }]),
  ];
}

/** META's map after a fold or an undo: the epoch moved on with its reason, the turn's record kept. */
const replayMap = (c: { replayEpoch: number; lastTurn?: LastTurn | undefined }, reason: EpochReason) =>
  ({ replayEpoch: c.replayEpoch + 1, replayReason: reason, ...(c.lastTurn ? { [LAST_TURN_ATTRIBUTE]: c.lastTurn } : {}) });

export type CommitPart = "memory" | "prior" | "marker" | "process" | "archive";

/**
 * The commit of a fold, in one transaction: the memory, the prior summary superseded, the range
 * marker, META (version bump, lease released, pending marker when archives do not all fit) and as
 * many archives as fit. `pendingArchive`: the rest roll forward.
 */
export function commitCompactionParts(tableName: string, key: ProcessKey, c: CompactionCommit, limit = TRANSACTION_LIMIT) {
  // A fold prepared in the background becomes the summary in place: only while still PREPARED
  // (or QUEUED, for a queued manual compaction the worker runs), so it is committed once.
  const fixed: Part<CommitPart>[] = [
    ["memory", { Put: { TableName: tableName, Item: memoryToItem(key, c.memory), ...when(c.fromFold ? statusIs(c.fromFold) : itemIsNew()) } }],
  ];
  if (c.priorSummaryId) fixed.push(["prior", { Update: supersedeUpdate(tableName, key, c.priorSummaryId, c.memory.id, c.at) }]);
  if (c.marker) {
    fixed.push(["marker", { Put: { TableName: tableName, Item: messageToItem(key, c.marker), ...when(itemIsNew()) } }]);
  }
  const room = limit - fixed.length - 1; // one more for META
  const now = c.archiveIds.slice(0, room);
  const pendingArchive = c.archiveIds.length > now.length;
  // META's map written whole: the revert hold ends, the epoch moves on (docs/turns.md, "Append-only between folds").
  const set = ["version = version + :one", "activeSummaryId = :mid", "#md = :md"];
  const values: Record<string, unknown> = { ":one": 1, ":mid": c.memory.id, ":md": replayMap(c, "fold") };
  if (pendingArchive) {
    set.push("pendingArchive = :pa", "pendingArchiveFrom = :from");
    values[":pa"] = rollForwardMarker("archive", c.memory.id);
    values[":from"] = now.length;
  }
  const meta = guarded(
    { TableName: tableName, Key: metaKey(key) },
    { expression: `SET ${set.join(", ")} REMOVE leaseOwner, leaseUntil`, names: { "#md": REVERT_HOLD_MAP }, values },
    leaseHeldBy(c.leaseOwner),
    versionIs(c.expectedVersion),
    // A fold never commits over an unfinished roll-forward: the view it folded may lack its archives.
    noPendingArchive,
    notDeleted,
  );
  // The originals' expiry (the memory's retention) rides on each archive: no write of its own.
  const expires = originalsExpiry(c.memory);
  const archives = now.map((id): Part<CommitPart> => ["archive", { Update: archiveUpdate(tableName, key, id, c.memory.id, c.at, expires) }]);
  return { parts: [...fixed, ["process", { Update: meta }] as Part<CommitPart>, ...archives], pendingArchive };
}

/**
 * Undoing the newest compaction, in one transaction: the memory REVERTED, the prior summary active
 * again, the range marker archived, META (version bump, revert hold, lease released) and as many
 * restores as fit. `pendingArchive`: the rest roll forward.
 */
export function revertCompactionParts(tableName: string, key: ProcessKey, r: RevertCommit, limit = TRANSACTION_LIMIT) {
  const fixed: Part<CommitPart>[] = [
    [
      "memory",
      {
        Update: guarded(
          { TableName: tableName, Key: memoryKey(key, r.memoryId) },
          {
            expression: "SET #status = :reverted, #md.revertedAt = :at REMOVE lsi1sk",
            names: { "#status": "status", "#md": "metadata" },
            values: { ":reverted": "REVERTED", ":at": r.at },
          },
          statusIs("OK"),
          notSuperseded,
        ),
      },
    ],
  ];
  if (r.priorSummaryId) {
    fixed.push([
      "prior",
      {
        Update: guarded(
          { TableName: tableName, Key: memoryKey(key, r.priorSummaryId) },
          { expression: "SET lsi1sk = :a REMOVE supersededAt, supersededByMemoryId", values: { ":a": activeMemoryKey(r.priorSummaryId) } },
          supersededBy(r.memoryId),
        ),
      },
    ]);
  }
  if (r.markerId) fixed.push(["marker", { Update: archiveUpdate(tableName, key, r.markerId, r.memoryId, r.at) }]);
  const room = limit - fixed.length - 1; // one more for META
  const now = r.restoreIds.slice(0, room);
  const pendingArchive = r.restoreIds.length > now.length;
  const set = ["version = version + :one", "#md = :hold"];
  // The map is written whole (an older META may have none), with the last turn's record as the undo read it.
  const values: Record<string, unknown> = { ":one": 1, ":hold": { [REVERT_HOLD_ATTRIBUTE]: r.holdTokens, ...replayMap(r, "revert") } };
  if (r.priorSummaryId) {
    set.push("activeSummaryId = :prior");
    values[":prior"] = r.priorSummaryId;
  }
  if (pendingArchive) {
    set.push("pendingArchive = :pa", "pendingArchiveFrom = :from");
    values[":pa"] = rollForwardMarker("restore", r.memoryId);
    values[":from"] = now.length;
  }
  const meta = guarded(
    { TableName: tableName, Key: metaKey(key) },
    {
      expression: `SET ${set.join(", ")} REMOVE leaseOwner, leaseUntil${r.priorSummaryId ? "" : ", activeSummaryId"}`,
      names: { "#md": REVERT_HOLD_MAP },
      values,
    },
    leaseHeldBy(r.leaseOwner),
    versionIs(r.expectedVersion),
    noPendingArchive,
    notDeleted,
  );
  const restores = now.map((id): Part<CommitPart> => ["archive", { Update: restoreUpdate(tableName, key, id, r.memoryId) }]);
  return { parts: [...fixed, ["process", { Update: meta }] as Part<CommitPart>, ...restores], pendingArchive };
}
