/** The inbox port over the inbox items (inputs in inbox-params.ts). */
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { notFound } from "../../domain/errors.js";
import type { InboxStore } from "../../ports/store.js";
import { failedItem, failedParts, isConditionFailure } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { answerInboxItemParams, claimRangeJobParams, getInboxItemParams, listInboxParams, putInboxItemParts } from "./inbox-params.js";
import { InboxRecord, readItem } from "./items.js";
import { queryAll } from "./paging.js";

export function createInboxStore({ client, tableName, sendTransaction }: StoreContext): InboxStore {
  return {
    async putInboxItem(tenantId, item) {
      const parts = putInboxItemParts(tableName, tenantId, item);
      try {
        await sendTransaction(parts);
        return { created: true, item };
      } catch (e) {
        const failed = failedParts(e, parts);
        if (failed?.item?.item) return { created: false, item: readItem(InboxRecord, failed.item.item).item };
        // A deleted (or missing) process takes no offer (docs/api.md, "Deleting a process").
        if (failed?.process) throw notFound("process", item.processId);
        throw e;
      }
    },

    async getInboxItem(tenantId, itemId) {
      const out = await client.send(new GetCommand(getInboxItemParams(tableName, tenantId, itemId)));
      return out.Item ? readItem(InboxRecord, out.Item).item : null;
    },

    async listInbox(tenantId, filter) {
      const { items } = await queryAll(client, listInboxParams(tableName, tenantId, filter));
      return items.map((i) => readItem(InboxRecord, i).item);
    },

    async answerInboxItem(tenantId, itemId, status, at) {
      try {
        const out = await client.send(new UpdateCommand(answerInboxItemParams(tableName, tenantId, itemId, status, at)));
        return { ok: true, item: readItem(InboxRecord, out.Attributes).item };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: failedItem(e, InboxRecord) ? "not_open" : "not_found" };
      }
    },

    async claimRangeJob(tenantId, itemId, jobId) {
      try {
        await client.send(new UpdateCommand(claimRangeJobParams(tableName, tenantId, itemId, jobId)));
        return { ok: true, jobId };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const recorded = failedItem(e, InboxRecord)?.item.rangeJobId;
        return recorded ? { ok: true, jobId: recorded } : { ok: false, reason: "not_found" };
      }
    },
  };
}
