/**
 * Pure DynamoDB inputs of the message aggregate and of the replay read (the sparse index, see
 * table.ts). Nothing here sends: tests assert the whole input.
 */
import type { GetCommandInput, QueryCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { ClearedResult, Message } from "../../domain/model.js";
import type { LastTurn } from "../../domain/last-turn.js";
import type { ListOptions, ProcessKey } from "../../ports/store.js";
import {
  archivedInto,
  guarded,
  metaMapExists,
  recordTurnSet,
  inReplay,
  itemExists,
  itemIsNew,
  noPendingArchive,
  notArchived,
  processLive,
  notCleared,
  tagsAre,
  when,
  type Part,
} from "./conditions.js";
import { messageToItem } from "./items.js";
import { ACTIVE_PREFIX, META_SK, MESSAGE_PREFIX, TTL_ATTRIBUTE, activeMessageKey, idempotencySk, messageSk, processPk } from "./keys.js";
import { decodeCursor } from "./paging.js";
import { tableIndexes } from "./table.js";

export const messageKey = (key: ProcessKey, id: string) => ({ pk: processPk(key), sk: messageSk(id) });

export const getMessageParams = (tableName: string, key: ProcessKey, id: string): GetCommandInput => ({
  TableName: tableName,
  Key: messageKey(key, id),
  ConsistentRead: true,
});

/**
 * Appending a message: `process` guards the process's existence (a USER message also records that
 * the process has one, which the auto-pin check reads; a turn's append records the turn, in META's
 * map, which must then be there: process-store.ts adds it to an older META), `message` writes it
 * once, and `idempotency` remembers which message an idempotency key produced, and the hash of its body.
 */
export function appendMessageParts(
  tableName: string,
  key: ProcessKey,
  message: Message,
  idempotencyKey?: string,
  bodyHash?: string,
  lastTurn?: LastTurn,
): Part<"process" | "message" | "idempotency">[] {
  const pk = processPk(key);
  const record = lastTurn && recordTurnSet(lastTurn);
  const firstUser = message.role === "USER" ? "firstUserMessageId = if_not_exists(firstUserMessageId, :id)" : "";
  const set = [firstUser, record?.expression].filter(Boolean);
  const process = set.length
    ? {
        Update: guarded(
          { TableName: tableName, Key: { pk, sk: META_SK } },
          { expression: `SET ${set.join(", ")}`, names: record?.names, values: { ...(firstUser && { ":id": message.id }), ...record?.values } },
          processLive,
          ...(record ? [metaMapExists] : []),
        ),
      }
    : { ConditionCheck: { TableName: tableName, Key: { pk, sk: META_SK }, ...when(processLive) } };
  const parts: Part<"process" | "message" | "idempotency">[] = [
    ["process", process],
    ["message", { Put: { TableName: tableName, Item: messageToItem(key, message), ...when(itemIsNew()) } }],
  ];
  if (idempotencyKey) {
    parts.push([
      "idempotency",
      {
        Put: {
          TableName: tableName,
          Item: { pk, sk: idempotencySk(idempotencyKey), type: "IDEM", messageId: message.id, ...(bodyHash ? { bodyHash } : {}) },
          ...when(itemIsNew()),
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
    ]);
  }
  return parts;
}

/** One page of every message, archived included, oldest first. */
export function listMessagesParams(tableName: string, key: ProcessKey, { limit, cursor }: ListOptions): QueryCommandInput {
  const pk = processPk(key);
  return {
    TableName: tableName,
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :m)",
    ExpressionAttributeValues: { ":pk": pk, ":m": MESSAGE_PREFIX },
    Limit: limit,
    ExclusiveStartKey: decodeCursor(cursor, { attr: "pk", value: pk, keys: ["pk", "sk"], sortPrefix: { attr: "sk", prefix: MESSAGE_PREFIX } }),
    ConsistentRead: true,
  };
}

/** New tags on an active message whose tags are still `expectedTags`; META stays as it is. */
export function retagUpdate(
  tableName: string,
  key: ProcessKey,
  messageId: string,
  change: { tags: string[]; expectedTags: string[] },
): UpdateCommandInput {
  return guarded(
    { TableName: tableName, Key: messageKey(key, messageId), ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const },
    { expression: "SET tags = :t", values: { ":t": change.tags } },
    itemExists(),
    notArchived,
    tagsAre(change.expectedTags),
  );
}

/**
 * New tags on an active message whose tags are still `expectedTags` (`message`, {@link retagUpdate}),
 * and a META version bump (`process`), so a compaction that read the old tags cannot commit.
 */
export function updateTagsParts(
  tableName: string,
  key: ProcessKey,
  messageId: string,
  change: { tags: string[]; expectedTags: string[] },
): Part<"message" | "process">[] {
  const pk = processPk(key);
  return [
    [
      "message",
      { Update: retagUpdate(tableName, key, messageId, change) },
    ],
    [
      "process",
      {
        Update: guarded(
          { TableName: tableName, Key: { pk, sk: META_SK }, ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
          { expression: "SET version = version + :one", values: { ":one": 1 } },
          processLive,
          noPendingArchive,
        ),
      },
    ],
  ];
}

/**
 * The replay read: META, active messages, the active summary and pending folds in one strongly
 * consistent Query of the sparse index.
 */
export const activeViewParams = (tableName: string, key: ProcessKey): QueryCommandInput => ({
  TableName: tableName,
  IndexName: tableIndexes.lsi1.name,
  KeyConditionExpression: "pk = :pk AND begins_with(lsi1sk, :a)",
  ExpressionAttributeValues: { ":pk": processPk(key), ":a": ACTIVE_PREFIX },
  // Only what the index holds: asking for more would fetch each item from the base table.
  Select: "ALL_PROJECTED_ATTRIBUTES",
  ConsistentRead: true,
});

/**
 * Archive update of one message: conditional, so an archived message is never re-pointed. With
 * `expiresAtEpoch` (the fold's retention, core/domain/retention.ts) the same write sets the
 * table's TTL attribute, so an original never sits archived without its expiry.
 */
export function archiveUpdate(
  tableName: string,
  key: ProcessKey,
  id: string,
  memoryId: string,
  at: string,
  expiresAtEpoch?: number,
): UpdateCommandInput {
  const ttl = expiresAtEpoch !== undefined;
  return guarded(
    { TableName: tableName, Key: messageKey(key, id) },
    {
      expression: `SET archivedInMemoryId = :m, archivedAt = :at${ttl ? ", #ttl = :exp" : ""} REMOVE lsi1sk`,
      ...(ttl ? { names: { "#ttl": TTL_ATTRIBUTE } } : {}),
      values: { ":m": memoryId, ":at": at, ...(ttl ? { ":exp": expiresAtEpoch } : {}) },
    },
    itemExists(),
    notArchived,
  );
}

/**
 * Restore of one message folded by `memoryId`: active again, conditional on still being archived
 * there, and without the TTL attribute (an active message is never deleted).
 */
export function restoreUpdate(tableName: string, key: ProcessKey, id: string, memoryId: string): UpdateCommandInput {
  return guarded(
    { TableName: tableName, Key: messageKey(key, id) },
    {
      expression: "SET lsi1sk = :a REMOVE archivedInMemoryId, archivedAt, #ttl",
      names: { "#ttl": TTL_ATTRIBUTE },
      values: { ":a": activeMessageKey(id) },
    },
    archivedInto(memoryId),
  );
}

/**
 * Clears one TOOL result from the replay (docs/compaction.md, "Tool-result clearing"): only an
 * active, not yet cleared message whose tags are still the ones the round read, so a concurrent
 * round or fold wins cleanly and a result a PATCH just pinned (or made strong) is never cleared.
 */
export function clearUpdate(
  tableName: string,
  key: ProcessKey,
  { id, cleared, tokens, expectedTags }: { id: string; cleared: ClearedResult; tokens: number; expectedTags: string[] },
): UpdateCommandInput {
  return guarded(
    { TableName: tableName, Key: messageKey(key, id) },
    { expression: "SET cleared = :c, tokens = :t", values: { ":c": cleared, ":t": tokens } },
    inReplay,
    notCleared,
    tagsAre(expectedTags),
  );
}
