/**
 * The import port (docs/api.md, "Export and import"): a hidden META, then the exported messages
 * and memories written as they are, in transactions guarded by META still being the import's (so
 * an import never brings a deleted process back), then one update that makes it live. Each
 * transaction holds at most 99 items and 3.5 MB of them, under DynamoDB's 100 items and 4 MB.
 */
import { PutCommand, UpdateCommand, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import { storedNative, type Memory, type Message, type Process } from "../../domain/model.js";
import { IMPORT_WINDOW_MS, rateWindow, retryAfterSeconds } from "../../domain/rate-limit.js";
import type { ImportStore, ImportedProcess } from "../../ports/import-store.js";
import type { ProcessKey } from "../../ports/store.js";
import { failedItem, failedParts, guarded, IMPORTING, importingIs, isConditionFailure, itemIsNew, REVERT_HOLD_MAP, when, type Part } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { MetaItem, memoryToItem, messageToItem } from "./items.js";
import { importWindowPk, META_ACTIVE, META_SK, processListSk, processPk, processesByProject, processesByTenant, RATE_SK, unlistedProcesses } from "./keys.js";
import { countParams } from "./rate-limiter.js";

/**
 * The hidden META of an import, only where no item (no tombstone either) is stored: the import's
 * token, and none of the keys that make a process readable (the replay index) or listed; only the
 * tenant's unlisted processes (keys.ts) hold it, where a tenant's erasure finds a crashed import.
 */
export function importedMetaParams(tableName: string, tenantId: string, process: Process, token: string) {
  return {
    TableName: tableName,
    Item: {
      pk: processPk({ tenantId, processId: process.processId }),
      sk: META_SK,
      type: "META",
      tenantId,
      ...process,
      // As JSON text, like every META (items.ts).
      ...(process.conversation !== undefined ? { conversation: JSON.stringify(process.conversation) } : {}),
      version: 0,
      // META's map (conditions.ts, REVERT_HOLD_MAP), where the first turn records itself.
      [REVERT_HOLD_MAP]: {},
      [IMPORTING]: token,
      gsi1pk: unlistedProcesses(tenantId),
      gsi1sk: processListSk(process.createdAt, process.processId),
    },
    ...when(itemIsNew("pk")),
    ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
  };
}

/** The one update that makes an import live: the replay and listing keys, the head, and the token gone. */
export function activateImportParams(tableName: string, key: ProcessKey, token: string, imported: ImportedProcess): UpdateCommandInput {
  const { process, activeSummaryId, firstUserMessageId } = imported;
  const listSk = processListSk(process.createdAt, process.processId);
  const set = ["lsi1sk = :active", "gsi1pk = :g1pk", "gsi1sk = :listSk", "gsi2pk = :g2pk", "gsi2sk = :listSk"];
  const values: Record<string, unknown> = {
    ":active": META_ACTIVE,
    ":g1pk": processesByTenant(key.tenantId),
    ":g2pk": processesByProject(key.tenantId, process.projectId),
    ":listSk": listSk,
  };
  if (activeSummaryId) {
    set.push("activeSummaryId = :head");
    values[":head"] = activeSummaryId;
  }
  if (firstUserMessageId) {
    set.push("firstUserMessageId = :firstUser");
    values[":firstUser"] = firstUserMessageId;
  }
  return guarded(
    { TableName: tableName, Key: { pk: processPk(key), sk: META_SK } },
    { expression: `SET ${set.join(", ")} REMOVE #importing`, values },
    importingIs(token),
  );
}

/** One transaction's parts: META still the import's, then each item put only where none is. */
export function importedItemParts(tableName: string, key: ProcessKey, token: string, messages: Message[], memories: Memory[]): Part<string>[] {
  return [
    ["process", { ConditionCheck: { TableName: tableName, Key: { pk: processPk(key), sk: META_SK }, ...when(importingIs(token)) } }],
    ...messages.map((m): Part<string> => ["message", { Put: { TableName: tableName, Item: messageToItem(key, m), ...when(itemIsNew()) } }]),
    ...memories.map((m): Part<string> => ["memory", { Put: { TableName: tableName, Item: memoryToItem(key, m), ...when(itemIsNew()) } }]),
  ];
}

/**
 * Most bytes of items in one import transaction: DynamoDB refuses a transaction past 4 MB, and a
 * request's own names and conditions take some room besides the items.
 */
export const IMPORT_TRANSACTION_BYTES = 3.5 * 1024 * 1024;

/** `items` in order, cut where the next would pass `maxItems` or IMPORT_TRANSACTION_BYTES (a single larger item alone). */
export function importBatches<T>(items: readonly T[], bytesOf: (item: T) => number, maxItems: number, maxBytes = IMPORT_TRANSACTION_BYTES): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = bytesOf(item);
    if (batch.length > 0 && (batch.length >= maxItems || bytes + size > maxBytes)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

export function createImportStore(ctx: StoreContext): ImportStore {
  const { client, tableName, sendTransaction, transactionLimit } = ctx;
  return {
    async createImportedProcess(tenantId, process, token) {
      try {
        await client.send(new PutCommand(importedMetaParams(tableName, tenantId, process, token)));
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: failedItem(e, MetaItem)?.deletedAt !== undefined ? "deleted" : "exists" };
      }
    },

    async putImportedItems(key, token, { messages, memories }) {
      const all: Array<{ message?: Message; memory?: Memory }> = [...messages.map((message) => ({ message })), ...memories.map((memory) => ({ memory }))];
      // One slot of each transaction is the live check on META.
      // An item's JSON is never smaller than DynamoDB counts it: a safe measure, and no more code.
      const bytes = (b: (typeof all)[number]) => Buffer.byteLength(JSON.stringify(b.message ? [b.message, storedNative(b.message)] : b.memory));
      for (const batch of importBatches(all, bytes, transactionLimit - 1)) {
        const parts = importedItemParts(
          tableName,
          key,
          token,
          batch.flatMap((b) => (b.message ? [b.message] : [])),
          batch.flatMap((b) => (b.memory ? [b.memory] : [])),
        );
        try {
          await sendTransaction(parts);
        } catch (e) {
          if (failedParts(e, parts)?.process) return { ok: false, reason: "deleted" };
          throw e;
        }
      }
      return { ok: true };
    },

    async activateImportedProcess(key, token, imported) {
      try {
        await client.send(new UpdateCommand(activateImportParams(tableName, key, token, imported)));
        return { ok: true };
      } catch (e) {
        if (isConditionFailure(e)) return { ok: false, reason: "deleted" };
        throw e;
      }
    },

    async takeImportSlot(tenantId, nowMs, perMinute) {
      const window = rateWindow(nowMs, IMPORT_WINDOW_MS);
      try {
        await client.send(new UpdateCommand(countParams(tableName, { pk: importWindowPk(tenantId, window.startSeconds), sk: RATE_SK }, perMinute, window.endMs)));
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, limit: perMinute, retryAfterSeconds: retryAfterSeconds(nowMs, IMPORT_WINDOW_MS) };
      }
    },
  };
}
