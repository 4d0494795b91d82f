/**
 * The Store port over one DynamoDB table (layout in table.ts and keys.ts). Expected conflicts of
 * conditional writes come back as `{ ok: false, reason }`; anything else is rethrown.
 */
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { invalid } from "../../domain/errors.js";
import type { Memory, Message, Page, Process } from "../../domain/model.js";
import type {
  ActiveView,
  CompactionCommit,
  ListOptions,
  ProcessInput,
  ProcessKey,
  ProcessState,
  Store,
} from "../../ports/store.js";
import {
  INBOX_SK,
  META_ACTIVE,
  META_SK,
  MESSAGE_PREFIX,
  activeMemoryKey,
  activeMessageKey,
  pendingFoldKey,
  TTL_ATTRIBUTE,
  idempotencySk,
  inboxByProcess,
  inboxByTenant,
  inboxListSk,
  inboxPk,
  memorySk,
  messageSk,
  processListSk,
  processPk,
  processesByProject,
  processesByTenant,
  settingsPk,
  settingsSk,
  MEMORY_PREFIX,
} from "./keys.js";
import {
  IdempotencyItem,
  InboxRecord,
  MemoryItem,
  MessageItem,
  MetaItem,
  SettingsItem,
  parseItem,
  readItem,
  toMemory,
  toMessage,
  toProcess,
} from "./items.js";
import { tableIndexes } from "./table.js";
import { backoffDelay, sleep, type BackoffPolicy } from "../backoff.js";

type Tx = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** DynamoDB's limit of items in one TransactWriteItems call. */
export const TRANSACTION_LIMIT = 100;
/** Parallel single-item writes when archiving past one transaction. */
const WRITE_CONCURRENCY = 16;

export interface DynamoStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Waits between retries of throttled work (tests pass their own to observe them). */
  retry?: { sleep?: (ms: number) => Promise<void>; random?: () => number };
}

/** Retries of a BatchGetItem's unprocessed keys (throttling), and how long to wait between them. */
export const BATCH_GET_ATTEMPTS = 8;
export const BATCH_GET_BACKOFF: BackoffPolicy = { baseMs: 50, capMs: 2_000 };
const TRANSACTION_BACKOFF: BackoffPolicy = { baseMs: 20, capMs: 500 };

export function encodeCursor(key: Record<string, unknown> | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString("base64url") : undefined;
}

/** Cursors are opaque to callers; one that does not belong to this listing is a 400. */
export function decodeCursor(
  cursor: string | undefined,
  expectPk?: { attr: string; value: string },
): Record<string, unknown> | undefined {
  if (!cursor) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid("cursor.invalid", "cursor is not valid", { fields: ["cursor"] });
  }
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    Object.values(parsed).some((v) => typeof v !== "string") ||
    (expectPk && (parsed as Record<string, unknown>)[expectPk.attr] !== expectPk.value)
  ) {
    throw invalid("cursor.invalid", "cursor is not valid for this listing", { fields: ["cursor"] });
  }
  return parsed as Record<string, unknown>;
}

const isConditionFailure = (e: unknown) => e instanceof ConditionalCheckFailedException;

/** Raw attribute values of the item a failed condition saw (ReturnValuesOnConditionCheckFailure). */
const failedItem = (e: unknown): Record<string, unknown> | undefined => {
  const raw = (e as { Item?: Record<string, never> }).Item;
  return raw ? unmarshall(raw) : undefined;
};

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map(fn));
  }
}

export function messageToItem(key: ProcessKey, m: Message): MessageItem {
  const active = m.archivedInMemoryId === null;
  return readItem(MessageItem, {
    pk: processPk(key),
    sk: messageSk(m.id),
    ...(active ? { lsi1sk: activeMessageKey(m.id) } : { archivedInMemoryId: m.archivedInMemoryId }),
    type: "MSG",
    id: m.id,
    processId: m.processId,
    role: m.role,
    content: m.content,
    tags: m.tags,
    createdAt: m.createdAt,
    toolCallId: m.toolCallId,
    toolCalls: m.toolCalls,
    tokens: m.tokens,
    cleared: m.cleared,
  });
}

const isPendingFold = (m: Pick<Memory, "status">) => m.status === "QUEUED" || m.status === "PREPARED";

export function memoryToItem(key: ProcessKey, m: Memory): MemoryItem {
  const active = m.status === "OK" && m.supersededAt === null;
  const expires = isPendingFold(m) && m.metadata.expiresAt ? Math.ceil(Date.parse(m.metadata.expiresAt) / 1000) : undefined;
  const item = readItem(MemoryItem, {
    pk: processPk(key),
    sk: memorySk(m.id),
    ...(active ? { lsi1sk: activeMemoryKey(m.id) } : isPendingFold(m) ? { lsi1sk: pendingFoldKey(m.id) } : {}),
    type: "MEM",
    id: m.id,
    processId: m.processId,
    kind: m.kind,
    status: m.status,
    content: m.content,
    sourceRefs: m.sourceRefs,
    metadata: m.metadata,
    createdAt: m.createdAt,
    supersededAt: m.supersededAt ?? undefined,
    supersededByMemoryId: m.supersededByMemoryId,
    tokens: m.tokens,
    citations: m.citations,
    droppedUnits: m.droppedUnits,
    keepUnits: m.keepUnits,
  });
  // DynamoDB's TTL deletes a queued or prepared fold nobody used; not part of the item schema
  // (the replay index does not project it: turns read metadata.expiresAt).
  return expires !== undefined ? ({ ...item, [TTL_ATTRIBUTE]: expires } as MemoryItem) : item;
}

const toState = (meta: MetaItem): ProcessState => ({
  process: toProcess(meta),
  version: meta.version,
  activeSummaryId: meta.activeSummaryId ?? null,
  lease: meta.leaseOwner && meta.leaseUntil ? { owner: meta.leaseOwner, until: meta.leaseUntil } : null,
  pendingArchive: meta.pendingArchive ?? null,
  hasUserMessage: meta.firstUserMessageId !== undefined,
});

/** Archive update of one message: conditional, so an archived message is never re-pointed. */
export function archiveUpdate(tableName: string, key: ProcessKey, id: string, memoryId: string, at: string) {
  return {
    TableName: tableName,
    Key: { pk: processPk(key), sk: messageSk(id) },
    UpdateExpression: "SET archivedInMemoryId = :m, archivedAt = :at REMOVE lsi1sk",
    ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(archivedInMemoryId)",
    ExpressionAttributeValues: { ":m": memoryId, ":at": at },
  };
}

/** Restore of one message folded by `memoryId`: active again, conditional on still being archived there. */
export function restoreUpdate(tableName: string, key: ProcessKey, id: string, memoryId: string) {
  return {
    TableName: tableName,
    Key: { pk: processPk(key), sk: messageSk(id) },
    UpdateExpression: "SET lsi1sk = :a REMOVE archivedInMemoryId, archivedAt",
    ConditionExpression: "archivedInMemoryId = :m",
    ExpressionAttributeValues: { ":a": activeMessageKey(id), ":m": memoryId },
  };
}

/**
 * META attribute of the revert hold (docs/compaction.md, "Undoing a compaction"): only the lease
 * condition reads it, so it stays out of MetaItem and out of the replay index's projection.
 */
export const REVERT_HOLD_ATTRIBUTE = "revertHoldTokens";

export function supersedeUpdate(tableName: string, key: ProcessKey, oldId: string, newId: string, at: string) {
  return {
    TableName: tableName,
    Key: { pk: processPk(key), sk: memorySk(oldId) },
    UpdateExpression: "SET supersededAt = :at, supersededByMemoryId = :n REMOVE lsi1sk",
    ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(supersededAt)",
    ExpressionAttributeValues: { ":at": at, ":n": newId },
  };
}

export function createDynamoStore({ client, tableName, retry = {} }: DynamoStoreOptions): Store {
  const wait = retry.sleep ?? sleep;
  const random = retry.random ?? Math.random;
  const optionalProcessFields = ["sessionId", "parentProcessId", "name", "recipe", "engine", "title"] as const;

  async function queryAll(input: QueryCommandInput) {
    const items: Record<string, unknown>[] = [];
    let consumed = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await client.send(
        new QueryCommand({ ...input, ExclusiveStartKey: start, ReturnConsumedCapacity: "TOTAL" }),
      );
      items.push(...(out.Items ?? []));
      consumed += out.ConsumedCapacity?.CapacityUnits ?? 0;
      start = out.LastEvaluatedKey;
    } while (start);
    return { items, consumed };
  }

  /**
   * Transactions touching the same item at the same moment are cancelled with TransactionConflict
   * (an append and a compaction commit both touch META); those are retried, conditions are not.
   */
  async function sendTransaction(items: Tx[], attempts = 5) {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.send(new TransactWriteCommand({ TransactItems: items }));
        return;
      } catch (e) {
        const conflict =
          e instanceof TransactionCanceledException &&
          (e.CancellationReasons ?? []).some((r) => r.Code === "TransactionConflict") &&
          !(e.CancellationReasons ?? []).some((r) => r.Code === "ConditionalCheckFailed");
        if (!conflict || attempt >= attempts) throw e;
        await wait(backoffDelay(attempt, TRANSACTION_BACKOFF, random));
      }
    }
  }

  async function getMeta(key: ProcessKey): Promise<MetaItem | null> {
    const out = await client.send(
      new GetCommand({ TableName: tableName, Key: { pk: processPk(key), sk: META_SK }, ConsistentRead: true }),
    );
    return out.Item ? readItem(MetaItem, out.Item) : null;
  }

  async function getMessage(key: ProcessKey, id: string): Promise<Message | null> {
    const out = await client.send(
      new GetCommand({ TableName: tableName, Key: { pk: processPk(key), sk: messageSk(id) }, ConsistentRead: true }),
    );
    return out.Item ? toMessage(readItem(MessageItem, out.Item)) : null;
  }

  async function markArchived(key: ProcessKey, messageIds: string[], memoryId: string, at = new Date().toISOString()) {
    const archived: string[] = [];
    const skipped: string[] = [];
    await inBatches(messageIds, WRITE_CONCURRENCY, async (id) => {
      try {
        await client.send(new UpdateCommand(archiveUpdate(tableName, key, id, memoryId, at)));
        archived.push(id);
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        skipped.push(id);
      }
    });
    return { archived, skipped };
  }

  /** Conditional and idempotent: only a message still archived into `memoryId` is restored. */
  async function restoreArchived(key: ProcessKey, messageIds: string[], memoryId: string) {
    const archived: string[] = [];
    await inBatches(messageIds, WRITE_CONCURRENCY, async (id) => {
      try {
        await client.send(new UpdateCommand(restoreUpdate(tableName, key, id, memoryId)));
        archived.push(id);
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    });
    return { archived };
  }

  const store: Store = {
    async upsertProcess(tenantId, input: ProcessInput, at): Promise<Process> {
      const key = { tenantId, processId: input.processId };
      const set: string[] = [
        "#type = :type",
        "tenantId = :tenant",
        "processId = :pid",
        "projectId = :project",
        "allowsCrossProjectSpawn = :cross",
        "createdAt = if_not_exists(createdAt, :now)",
        "version = if_not_exists(version, :zero)",
        "lsi1sk = :active",
        "gsi1pk = :g1pk",
        "gsi1sk = if_not_exists(gsi1sk, :listSk)",
        "gsi2pk = :g2pk",
        "gsi2sk = if_not_exists(gsi2sk, :listSk)",
      ];
      const remove: string[] = [];
      const names: Record<string, string> = { "#type": "type" };
      const values: Record<string, unknown> = {
        ":type": "META",
        ":tenant": tenantId,
        ":pid": input.processId,
        ":project": input.projectId,
        ":cross": input.allowsCrossProjectSpawn ?? false,
        ":now": at,
        ":zero": 0,
        ":active": META_ACTIVE,
        ":g1pk": processesByTenant(tenantId),
        ":g2pk": processesByProject(tenantId, input.projectId),
        ":listSk": processListSk(at, input.processId),
      };
      // PUT semantics: fields the caller leaves out are removed.
      for (const f of optionalProcessFields) {
        names[`#${f}`] = f;
        if (input[f] !== undefined) {
          set.push(`#${f} = :${f}`);
          values[`:${f}`] = input[f];
        } else remove.push(`#${f}`);
      }
      const out = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: processPk(key), sk: META_SK },
          UpdateExpression: `SET ${set.join(", ")}${remove.length ? ` REMOVE ${remove.join(", ")}` : ""}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
        }),
      );
      return toProcess(readItem(MetaItem, out.Attributes));
    },

    async getProcess(key) {
      const meta = await getMeta(key);
      return meta ? toState(meta) : null;
    },

    async listProcesses(tenantId, { limit, cursor, projectId }) {
      const index = projectId ? tableIndexes.gsi2 : tableIndexes.gsi1;
      const pkValue = projectId ? processesByProject(tenantId, projectId) : processesByTenant(tenantId);
      const out = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index.name,
          KeyConditionExpression: "#pk = :pk",
          ExpressionAttributeNames: { "#pk": index.partitionKey },
          ExpressionAttributeValues: { ":pk": pkValue },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: decodeCursor(cursor, { attr: index.partitionKey, value: pkValue }),
        }),
      );
      return {
        items: (out.Items ?? []).map((i) => toProcess(readItem(MetaItem, i))),
        nextCursor: encodeCursor(out.LastEvaluatedKey),
      };
    },

    async hasUserMessage(key) {
      return (await getMeta(key))?.firstUserMessageId !== undefined;
    },

    async appendMessage(key, message, idempotencyKey) {
      const pk = processPk(key);
      // The META item guards the process's existence; a USER message also records that the
      // process has one, which is what the auto-pin existence check reads.
      const metaGuard: Tx =
        message.role === "USER"
          ? {
              Update: {
                TableName: tableName,
                Key: { pk, sk: META_SK },
                UpdateExpression: "SET firstUserMessageId = if_not_exists(firstUserMessageId, :id)",
                ConditionExpression: "attribute_exists(pk)",
                ExpressionAttributeValues: { ":id": message.id },
              },
            }
          : { ConditionCheck: { TableName: tableName, Key: { pk, sk: META_SK }, ConditionExpression: "attribute_exists(pk)" } };
      const items: Tx[] = [
        metaGuard,
        {
          Put: {
            TableName: tableName,
            Item: messageToItem(key, message),
            ConditionExpression: "attribute_not_exists(sk)",
          },
        },
      ];
      if (idempotencyKey) {
        items.push({
          Put: {
            TableName: tableName,
            Item: { pk, sk: idempotencySk(idempotencyKey), type: "IDEM", messageId: message.id },
            ConditionExpression: "attribute_not_exists(sk)",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        });
      }
      try {
        await sendTransaction(items);
        return { ok: true, message, created: true };
      } catch (e) {
        if (!(e instanceof TransactionCanceledException)) throw e;
        const reasons = e.CancellationReasons ?? [];
        if (reasons[0]?.Code === "ConditionalCheckFailed") return { ok: false, reason: "process_not_found" };
        const idem = reasons[2];
        if (idem?.Code === "ConditionalCheckFailed" && idem.Item) {
          const existing = readItem(IdempotencyItem, unmarshall(idem.Item as never));
          const first = await getMessage(key, existing.messageId);
          if (first) return { ok: true, message: first, created: false };
        }
        throw e;
      }
    },

    async listMessages(key, { limit, cursor }) {
      const pk = processPk(key);
      const out = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :m)",
          ExpressionAttributeValues: { ":pk": pk, ":m": MESSAGE_PREFIX },
          Limit: limit,
          ExclusiveStartKey: decodeCursor(cursor, { attr: "pk", value: pk }),
          ConsistentRead: true,
        }),
      );
      return {
        items: (out.Items ?? []).map((i) => toMessage(readItem(MessageItem, i))),
        nextCursor: encodeCursor(out.LastEvaluatedKey),
      } satisfies Page<Message>;
    },

    async getMessages(key, ids) {
      const found: Message[] = [];
      const unique = [...new Set(ids)];
      for (let i = 0; i < unique.length; i += 100) {
        let request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> | undefined = {
          [tableName]: {
            Keys: unique.slice(i, i + 100).map((id) => ({ pk: processPk(key), sk: messageSk(id) })),
            ConsistentRead: true,
          },
        };
        // Unprocessed keys mean throttling: ask again for them only, after a growing, jittered wait.
        for (let attempt = 1; request && Object.keys(request).length; attempt++) {
          if (attempt > 1) {
            if (attempt > BATCH_GET_ATTEMPTS) {
              throw new Error(`BatchGetItem left keys unprocessed after ${BATCH_GET_ATTEMPTS} attempts (throttled)`);
            }
            await wait(backoffDelay(attempt - 1, BATCH_GET_BACKOFF, random));
          }
          const out = await client.send(new BatchGetCommand({ RequestItems: request as never }));
          for (const item of out.Responses?.[tableName] ?? []) found.push(toMessage(readItem(MessageItem, item)));
          request = out.UnprocessedKeys as typeof request;
        }
      }
      return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },

    getMessage,

    async updateMessageTags(key, messageId, { tags, expectedTags }) {
      const pk = processPk(key);
      try {
        await sendTransaction([
          {
            Update: {
              TableName: tableName,
              Key: { pk, sk: messageSk(messageId) },
              UpdateExpression: "SET tags = :t",
              ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(archivedInMemoryId) AND tags = :old",
              ExpressionAttributeValues: { ":t": tags, ":old": expectedTags },
              ReturnValuesOnConditionCheckFailure: "ALL_OLD",
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: { pk, sk: META_SK },
              UpdateExpression: "SET version = version + :one",
              ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(pendingArchive)",
              ExpressionAttributeValues: { ":one": 1 },
              ReturnValuesOnConditionCheckFailure: "ALL_OLD",
            },
          },
        ]);
      } catch (e) {
        if (!(e instanceof TransactionCanceledException)) throw e;
        const [msg, meta] = e.CancellationReasons ?? [];
        if (msg?.Code === "ConditionalCheckFailed") {
          if (!msg.Item) return { ok: false, reason: "not_found" };
          const old = readItem(MessageItem, unmarshall(msg.Item as never));
          return { ok: false, reason: old.archivedInMemoryId !== undefined ? "archived" : "tags_changed" };
        }
        if (meta?.Code === "ConditionalCheckFailed") return { ok: false, reason: meta.Item ? "pending_archive" : "not_found" };
        throw e;
      }
      return { ok: true };
    },

    async activeView(key): Promise<ActiveView | null> {
      const { items, consumed } = await queryAll({
        TableName: tableName,
        IndexName: tableIndexes.lsi1.name,
        KeyConditionExpression: "pk = :pk AND begins_with(lsi1sk, :a)",
        ExpressionAttributeValues: { ":pk": processPk(key), ":a": "A#" },
        // Only what the index holds: asking for more would fetch each item from the base table.
        Select: "ALL_PROJECTED_ATTRIBUTES",
        ConsistentRead: true,
      });
      let meta: MetaItem | undefined;
      const summaries: Memory[] = [];
      const folds: Memory[] = [];
      const messages: Message[] = [];
      for (const raw of items) {
        const parsed = parseItem(raw);
        if (parsed.type === "META") meta = parsed.item;
        else if (parsed.type === "MSG") messages.push(toMessage(parsed.item));
        else if (isPendingFold(parsed.item)) folds.push(toMemory(parsed.item));
        else summaries.push(toMemory(parsed.item));
      }
      if (!meta) return null;
      return { state: toState(meta), summaries, folds, messages, consumedCapacity: consumed, itemsRead: items.length };
    },

    markArchived: (key, ids, memoryId) => markArchived(key, ids, memoryId),

    async markCleared(key, items) {
      const cleared: string[] = [];
      const skipped: string[] = [];
      await inBatches([...items], WRITE_CONCURRENCY, async ({ id, cleared: record, tokens }) => {
        try {
          await client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { pk: processPk(key), sk: messageSk(id) },
              UpdateExpression: "SET cleared = :c, tokens = :t",
              // Only an active, not yet cleared message: a concurrent round or fold wins cleanly.
              ConditionExpression: "attribute_exists(lsi1sk) AND attribute_not_exists(cleared)",
              ExpressionAttributeValues: { ":c": record, ":t": tokens },
            }),
          );
          cleared.push(id);
        } catch (e) {
          if (!isConditionFailure(e)) throw e;
          skipped.push(id);
        }
      });
      return { cleared, skipped };
    },

    async putMemory(key, memory) {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: memoryToItem(key, memory),
          ConditionExpression: "attribute_not_exists(sk)",
        }),
      );
    },

    async storeFold(key, fold, expect) {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: memoryToItem(key, fold),
            ConditionExpression: expect === "new" ? "attribute_not_exists(sk)" : "#status = :expected",
            ...(expect === "new" ? {} : { ExpressionAttributeNames: { "#status": "status" }, ExpressionAttributeValues: { ":expected": expect } }),
          }),
        );
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: "status_changed" };
      }
    },

    async discardFold(key, foldId, reason, at) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: processPk(key), sk: memorySk(foldId) },
            UpdateExpression: "SET #status = :d, metadata.discardReason = :r, metadata.discardedAt = :at REMOVE lsi1sk",
            ConditionExpression: "#status IN (:q, :p)",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":d": "DISCARDED", ":r": reason, ":at": at, ":q": "QUEUED", ":p": "PREPARED" },
          }),
        );
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: "status_changed" };
      }
    },

    async getMemory(key, memoryId) {
      const out = await client.send(
        new GetCommand({ TableName: tableName, Key: { pk: processPk(key), sk: memorySk(memoryId) }, ConsistentRead: true }),
      );
      return out.Item ? toMemory(readItem(MemoryItem, out.Item)) : null;
    },

    async listMemories(key) {
      const { items } = await queryAll({
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :s)",
        ExpressionAttributeValues: { ":pk": processPk(key), ":s": MEMORY_PREFIX },
        ScanIndexForward: false,
        ConsistentRead: true,
      });
      return items.map((i) => toMemory(readItem(MemoryItem, i)));
    },

    async supersede(key, oldId, newId, at) {
      try {
        await client.send(
          new UpdateCommand({
            ...supersedeUpdate(tableName, key, oldId, newId, at),
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: failedItem(e) ? "already_superseded" : "not_found" };
      }
    },

    async acquireLease(key, { owner, until, now, expectedVersion, replayTokens }) {
      const hold = replayTokens !== undefined;
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: processPk(key), sk: META_SK },
            UpdateExpression: "SET leaseOwner = :o, leaseUntil = :u",
            ConditionExpression:
              "attribute_exists(pk) AND version = :v AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)" +
              (hold ? " AND (attribute_not_exists(#hold) OR #hold <= :rt)" : ""),
            ...(hold ? { ExpressionAttributeNames: { "#hold": REVERT_HOLD_ATTRIBUTE } } : {}),
            ExpressionAttributeValues: { ":o": owner, ":u": until, ":v": expectedVersion, ":now": now, ...(hold ? { ":rt": replayTokens } : {}) },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const old = failedItem(e);
        if (!old) return { ok: false, reason: "not_found" };
        if (old.version !== expectedVersion) return { ok: false, reason: "version_changed" };
        const leased = typeof old.leaseUntil === "string" && old.leaseUntil >= now;
        return { ok: false, reason: leased ? "leased" : "revert_hold" };
      }
    },

    async releaseLease(key, owner) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: processPk(key), sk: META_SK },
            UpdateExpression: "REMOVE leaseOwner, leaseUntil",
            ConditionExpression: "leaseOwner = :o",
            ExpressionAttributeValues: { ":o": owner },
          }),
        );
      } catch (e) {
        // Someone else's lease (ours expired and was taken): leave it alone.
        if (!isConditionFailure(e)) throw e;
      }
    },

    async commitCompaction(key, c: CompactionCommit) {
      const pk = processPk(key);
      // A fold prepared in the background becomes the summary in place: only while still PREPARED
      // (or QUEUED, for a queued manual compaction the worker runs), so it is committed once.
      const fixed: Tx[] = [
        {
          Put: {
            TableName: tableName,
            Item: memoryToItem(key, c.memory),
            ...(c.fromFold
              ? {
                  ConditionExpression: "#status = :from",
                  ExpressionAttributeNames: { "#status": "status" },
                  ExpressionAttributeValues: { ":from": c.fromFold },
                }
              : { ConditionExpression: "attribute_not_exists(sk)" }),
          },
        },
      ];
      if (c.priorSummaryId) {
        fixed.push({ Update: supersedeUpdate(tableName, key, c.priorSummaryId, c.memory.id, c.at) });
      }
      if (c.marker) {
        fixed.push({
          Put: { TableName: tableName, Item: messageToItem(key, c.marker), ConditionExpression: "attribute_not_exists(sk)" },
        });
      }
      const room = TRANSACTION_LIMIT - fixed.length - 1; // one more for META
      const now = c.archiveIds.slice(0, room);
      const pending = c.archiveIds.length > now.length;
      const metaSet = ["version = version + :one", "activeSummaryId = :mid"];
      const values: Record<string, unknown> = { ":one": 1, ":mid": c.memory.id, ":o": c.leaseOwner, ":v": c.expectedVersion };
      if (pending) {
        metaSet.push("pendingArchive = :mid", "pendingArchiveFrom = :from");
        values[":from"] = now.length;
      }
      const meta: Tx = {
        Update: {
          TableName: tableName,
          Key: { pk, sk: META_SK },
          // A new fold ends any revert hold: the undone fold is history now.
          UpdateExpression: `SET ${metaSet.join(", ")} REMOVE leaseOwner, leaseUntil, #hold`,
          ConditionExpression: "leaseOwner = :o AND version = :v",
          ExpressionAttributeNames: { "#hold": REVERT_HOLD_ATTRIBUTE },
          ExpressionAttributeValues: values,
        },
      };
      const archives: Tx[] = now.map((id) => ({ Update: archiveUpdate(tableName, key, id, c.memory.id, c.at) }));
      try {
        await sendTransaction([...fixed, meta, ...archives]);
        return { ok: true, pendingArchive: pending };
      } catch (e) {
        if (e instanceof TransactionCanceledException) return { ok: false, reason: "conflict" };
        throw e;
      }
    },

    async revertCompaction(key, r) {
      const pk = processPk(key);
      const fixed: Tx[] = [
        {
          Update: {
            TableName: tableName,
            Key: { pk, sk: memorySk(r.memoryId) },
            UpdateExpression: "SET #status = :reverted, #md.revertedAt = :at REMOVE lsi1sk",
            ConditionExpression: "#status = :ok AND attribute_not_exists(supersededAt)",
            ExpressionAttributeNames: { "#status": "status", "#md": "metadata" },
            ExpressionAttributeValues: { ":reverted": "REVERTED", ":ok": "OK", ":at": r.at },
          },
        },
      ];
      if (r.priorSummaryId) {
        fixed.push({
          Update: {
            TableName: tableName,
            Key: { pk, sk: memorySk(r.priorSummaryId) },
            UpdateExpression: "SET lsi1sk = :a REMOVE supersededAt, supersededByMemoryId",
            ConditionExpression: "supersededByMemoryId = :m",
            ExpressionAttributeValues: { ":a": activeMemoryKey(r.priorSummaryId), ":m": r.memoryId },
          },
        });
      }
      if (r.markerId) fixed.push({ Update: archiveUpdate(tableName, key, r.markerId, r.memoryId, r.at) });
      const room = TRANSACTION_LIMIT - fixed.length - 1; // one more for META
      const now = r.restoreIds.slice(0, room);
      const pending = r.restoreIds.length > now.length;
      const set = ["version = version + :one", "#hold = :hold"];
      const values: Record<string, unknown> = { ":one": 1, ":hold": r.holdTokens, ":o": r.leaseOwner, ":v": r.expectedVersion };
      if (r.priorSummaryId) {
        set.push("activeSummaryId = :prior");
        values[":prior"] = r.priorSummaryId;
      }
      if (pending) {
        // The same roll-forward marker as a fold: finishPendingArchive sees the memory is REVERTED.
        set.push("pendingArchive = :mid", "pendingArchiveFrom = :from");
        values[":mid"] = r.memoryId;
        values[":from"] = now.length;
      }
      const meta: Tx = {
        Update: {
          TableName: tableName,
          Key: { pk, sk: META_SK },
          UpdateExpression: `SET ${set.join(", ")} REMOVE leaseOwner, leaseUntil${r.priorSummaryId ? "" : ", activeSummaryId"}`,
          ConditionExpression: "leaseOwner = :o AND version = :v",
          ExpressionAttributeNames: { "#hold": REVERT_HOLD_ATTRIBUTE },
          ExpressionAttributeValues: values,
        },
      };
      const restores: Tx[] = now.map((id) => ({ Update: restoreUpdate(tableName, key, id, r.memoryId) }));
      try {
        await sendTransaction([...fixed, meta, ...restores]);
        return { ok: true, pendingArchive: pending };
      } catch (e) {
        if (e instanceof TransactionCanceledException) return { ok: false, reason: "conflict" };
        throw e;
      }
    },

    async finishPendingArchive(key, memoryId) {
      const [meta, memory] = await Promise.all([getMeta(key), store.getMemory(key, memoryId)]);
      if (!meta || meta.pendingArchive !== memoryId || !memory) return { archived: 0 };
      const rest = memory.sourceRefs.slice(meta.pendingArchiveFrom ?? 0);
      const { archived } =
        memory.status === "REVERTED" ? await restoreArchived(key, rest, memoryId) : await markArchived(key, rest, memoryId, memory.createdAt);
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: processPk(key), sk: META_SK },
            UpdateExpression: "REMOVE pendingArchive, pendingArchiveFrom",
            ConditionExpression: "pendingArchive = :m",
            ExpressionAttributeValues: { ":m": memoryId },
          }),
        );
      } catch (e) {
        // Another caller finished the same roll-forward first.
        if (!isConditionFailure(e)) throw e;
      }
      return { archived: archived.length };
    },

    async getSettings(tenantId, projectId) {
      const out = await client.send(
        new GetCommand({ TableName: tableName, Key: { pk: settingsPk(tenantId), sk: settingsSk(projectId) }, ConsistentRead: true }),
      );
      return out.Item ? readItem(SettingsItem, out.Item).settings : null;
    },

    async putSettings(tenantId, projectId, settings, at) {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk: settingsPk(tenantId), sk: settingsSk(projectId), type: "SETTINGS", settings, updatedAt: at },
        }),
      );
    },

    async putInboxItem(tenantId, item) {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              pk: inboxPk(tenantId, item.id),
              sk: INBOX_SK,
              type: "INBOX",
              tenantId,
              item,
              status: item.status,
              gsi1pk: inboxByTenant(tenantId),
              gsi1sk: inboxListSk(item.createdAt, item.id),
              gsi2pk: inboxByProcess(tenantId, item.processId),
              gsi2sk: inboxListSk(item.createdAt, item.id),
            },
            ConditionExpression: "attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return { created: true, item };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const old = failedItem(e);
        if (!old) throw e;
        return { created: false, item: readItem(InboxRecord, old).item };
      }
    },

    async getInboxItem(tenantId, itemId) {
      const out = await client.send(
        new GetCommand({ TableName: tableName, Key: { pk: inboxPk(tenantId, itemId), sk: INBOX_SK }, ConsistentRead: true }),
      );
      return out.Item ? readItem(InboxRecord, out.Item).item : null;
    },

    async listInbox(tenantId, { processId, status }) {
      const index = processId ? tableIndexes.gsi2 : tableIndexes.gsi1;
      const { items } = await queryAll({
        TableName: tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": index.partitionKey, ...(status ? { "#status": "status" } : {}) },
        ExpressionAttributeValues: {
          ":pk": processId ? inboxByProcess(tenantId, processId) : inboxByTenant(tenantId),
          ...(status ? { ":status": status } : {}),
        },
        ...(status ? { FilterExpression: "#status = :status" } : {}),
        ScanIndexForward: false,
      });
      return items.map((i) => readItem(InboxRecord, i).item);
    },

    async answerInboxItem(tenantId, itemId, status, at) {
      try {
        const out = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: inboxPk(tenantId, itemId), sk: INBOX_SK },
            UpdateExpression: "SET #status = :s, #item.#status = :s, #item.answeredAt = :at",
            ConditionExpression: "attribute_exists(pk) AND #status = :open",
            ExpressionAttributeNames: { "#status": "status", "#item": "item" },
            ExpressionAttributeValues: { ":s": status, ":open": "OPEN", ":at": at },
            ReturnValues: "ALL_NEW",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return { ok: true, item: readItem(InboxRecord, out.Attributes).item };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: failedItem(e) ? "not_open" : "not_found" };
      }
    },
  };
  return store;
}

