/**
 * The erasure port: deleting a process (docs/api.md, "Deleting a process"; inputs in
 * erasure-params.ts). The tombstone goes on META first; from then on every write for the process
 * fails on its guard, so what the erasure finds is all there is, and nothing appears after it.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { AppError } from "../../domain/errors.js";
import { WRITE_CONCURRENCY, type ErasureStore, type ProcessKey } from "../../ports/store.js";
import { failedItem, isConditionFailure } from "./conditions.js";
import { inBatches, type StoreContext } from "./context.js";
import { deleteItemParams, finishDeletionParams, markDeletedParams, partitionKeysParams, partitionParams, tenantErasedParams, unlistedProcessesParams } from "./erasure-params.js";
import { inboxRefsParams, listInboxParams } from "./inbox-params.js";
import { MetaItem } from "./items.js";
import { INBOX_SK, META_SK, settingsPk, TENANT_ERASED_SK, usagePk } from "./keys.js";
import { encodeCursor, queryAll } from "./paging.js";
import { tenantLeftovers } from "./tenant-leftovers.js";
import { readMeta } from "./process-store.js";

/** Keys read per Query while erasing: a page of keys is small, so one page per batch of deletes. */
const ERASE_PAGE = 500;

interface ItemKey {
  pk: string;
  sk: string;
}

export function createErasureStore(ctx: StoreContext): ErasureStore {
  const { client, tableName } = ctx;

  const erase = (items: readonly ItemKey[]) =>
    inBatches(items, WRITE_CONCURRENCY, async (item) => {
      await client.send(new DeleteCommand(deleteItemParams(tableName, item)));
    });

  /**
   * The process's inbox items (their own partitions), erased first: those its partition points to
   * (a strongly consistent read, so an offer written just before the tombstone is found), then any
   * an index still lists (items written before the pointers existed).
   */
  async function eraseInbox(key: ProcessKey): Promise<number> {
    const refs = (await queryAll(client, inboxRefsParams(tableName, key.tenantId, key.processId))).items.map((i) => ({ pk: String(i.inboxPk), sk: INBOX_SK }));
    const { items } = await queryAll(client, { ...listInboxParams(tableName, key.tenantId, { processId: key.processId }), ProjectionExpression: "pk, sk" });
    const all = new Map([...refs, ...(items as unknown as ItemKey[])].map((i) => [i.pk, i]));
    await erase([...all.values()]);
    return all.size;
  }

  return {
    async markDeleted(key, at) {
      try {
        await client.send(new UpdateCommand(markDeletedParams(tableName, key, at)));
        return { ok: true, status: "deleting" };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const old = failedItem(e, MetaItem);
        if (!old) return { ok: false, reason: "not_found" };
        return { ok: true, status: old.deletion === "DELETED" ? "deleted" : "deleting" };
      }
    },

    async eraseItems(key, limit) {
      // Only a process that carries the tombstone is erased: after it, no write adds an item.
      const meta = await readMeta(ctx, key);
      if (meta?.deletedAt === undefined) {
        throw new AppError("internal", "process.not_deleted", `process '${key.processId}' carries no deletion tombstone`);
      }
      if (meta.deletion === "DELETED") return { erased: 0, done: true };
      let erased = await eraseInbox(key);
      let start: Record<string, unknown> | undefined;
      do {
        if (erased >= limit) return { erased, done: false };
        const out = await client.send(new QueryCommand(partitionKeysParams(tableName, key, Math.min(limit - erased + 1, ERASE_PAGE), start)));
        const items = ((out.Items ?? []) as ItemKey[]).filter((i) => i.sk !== META_SK);
        await erase(items);
        erased += items.length;
        start = out.LastEvaluatedKey;
      } while (start);
      return { erased, done: true };
    },

    async finishDeletion(key) {
      await client.send(new UpdateCommand(finishDeletionParams(tableName, key)));
    },

    async eraseTenantRecords(tenantId) {
      const reads = [
        partitionParams(tableName, settingsPk(tenantId)),
        partitionParams(tableName, usagePk(tenantId)),
        { ...listInboxParams(tableName, tenantId, {}), ProjectionExpression: "pk, sk" },
      ];
      let erased = 0;
      for (const read of reads) {
        const items = ((await queryAll(client, read)).items as unknown as ItemKey[]).filter((i) => i.sk !== TENANT_ERASED_SK);
        await erase(items);
        erased += items.length;
      }
      return erased;
    },

    async markTenantErased(tenantId, at) {
      await client.send(new PutCommand(tenantErasedParams(tableName, tenantId, at)));
    },

    async listUnlistedProcesses(tenantId, { limit, cursor }) {
      const out = await client.send(new QueryCommand(unlistedProcessesParams(tableName, tenantId, limit, cursor)));
      return { items: (out.Items ?? []).map((i) => String(i.processId)), nextCursor: encodeCursor(out.LastEvaluatedKey) };
    },

    tenantLeftovers: (tenantId, processIds) => tenantLeftovers(ctx, tenantId, processIds),
  };
}
