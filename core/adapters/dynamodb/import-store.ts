/**
 * The import port (docs/api.md, "Export and import"): a new META, then the exported messages and
 * memories written as they are, in transactions guarded like every write for a process (live, not
 * deleted), so an import never brings a deleted process back. Each transaction holds at most 99
 * items and 3.5 MB of them, under DynamoDB's 100 items and 4 MB.
 */
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { storedNative, type Memory, type Message } from "../../domain/model.js";
import type { ImportStore, ImportedProcess } from "../../ports/import-store.js";
import type { ProcessKey } from "../../ports/store.js";
import { processLiveCheck } from "./compaction-params.js";
import { REVERT_HOLD_MAP, itemIsNew, when, type Part, failedItem, isConditionFailure, failedParts } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { MetaItem, memoryToItem, messageToItem } from "./items.js";
import { META_ACTIVE, META_SK, processListSk, processPk, processesByProject, processesByTenant } from "./keys.js";

/** The META put of an imported process: only where no item (no tombstone either) is stored. */
export function importedMetaParams(tableName: string, tenantId: string, imported: ImportedProcess) {
  const { process, activeSummaryId, firstUserMessageId } = imported;
  const listSk = processListSk(process.createdAt, process.processId);
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
      lsi1sk: META_ACTIVE,
      gsi1pk: processesByTenant(tenantId),
      gsi1sk: listSk,
      gsi2pk: processesByProject(tenantId, process.projectId),
      gsi2sk: listSk,
      ...(activeSummaryId ? { activeSummaryId } : {}),
      ...(firstUserMessageId ? { firstUserMessageId } : {}),
    },
    ...when(itemIsNew("pk")),
    ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
  };
}

/** One transaction's parts: the live check on META, then each item put only where none is. */
export function importedItemParts(tableName: string, key: ProcessKey, messages: Message[], memories: Memory[]): Part<string>[] {
  return [
    processLiveCheck(tableName, key),
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
    async createImportedProcess(tenantId, imported) {
      try {
        await client.send(new PutCommand(importedMetaParams(tableName, tenantId, imported)));
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: failedItem(e, MetaItem)?.deletedAt !== undefined ? "deleted" : "exists" };
      }
    },

    async putImportedItems(key, { messages, memories }) {
      const all: Array<{ message?: Message; memory?: Memory }> = [...messages.map((message) => ({ message })), ...memories.map((memory) => ({ memory }))];
      // One slot of each transaction is the live check on META.
      // An item's JSON is never smaller than DynamoDB counts it: a safe measure, and no more code.
      const bytes = (b: (typeof all)[number]) => Buffer.byteLength(JSON.stringify(b.message ? [b.message, storedNative(b.message)] : b.memory));
      for (const batch of importBatches(all, bytes, transactionLimit - 1)) {
        const parts = importedItemParts(
          tableName,
          key,
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
  };
}
