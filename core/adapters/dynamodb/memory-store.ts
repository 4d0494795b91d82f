/** The memory port over the memory items: summaries, failures and background folds (inputs in compaction-params.ts). */
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { notFound } from "../../domain/errors.js";
import type { Memory } from "../../domain/model.js";
import type { MemoryStore, ProcessKey } from "../../ports/store.js";
import {
  discardFoldParams,
  extendFoldParts,
  getMemoryParams,
  listMemoriesParams,
  putMemoryParts,
  storeFoldParts,
  supersedeUpdate,
} from "./compaction-params.js";
import { conditionHolds, failedItem, guarded, failedParts, isConditionFailure, transactionHolds } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { MemoryItem, readItem, toMemory } from "./items.js";
import { memorySk, processPk } from "./keys.js";
import { queryAll } from "./paging.js";

/** One memory, sourceRefs included (strongly consistent); null when there is none. */
export async function readMemory({ client, tableName }: StoreContext, key: ProcessKey, memoryId: string): Promise<Memory | null> {
  const out = await client.send(new GetCommand(getMemoryParams(tableName, key, memoryId)));
  return out.Item ? toMemory(readItem(MemoryItem, out.Item)) : null;
}

export function createMemoryStore(ctx: StoreContext): MemoryStore {
  const { client, tableName, sendTransaction } = ctx;
  return {
    async putMemory(key, memory) {
      const parts = putMemoryParts(tableName, key, memory);
      try {
        await sendTransaction(parts);
      } catch (e) {
        // A deleted (or missing) process takes no new memory (docs/api.md, "Deleting a process").
        if (failedParts(e, parts)?.process) throw notFound("process", key.processId);
        throw e;
      }
    },

    async storeFold(key, fold, expect) {
      // The fold's status moved on, or the process was deleted: either way nothing was written.
      const stored = await transactionHolds(sendTransaction, storeFoldParts(tableName, key, fold, expect));
      return stored ? { ok: true } : { ok: false, reason: "status_changed" };
    },

    async extendFold(key, fold, o) {
      // Committed, discarded or extended meanwhile, or META moved on: the prepared fold stays as it was.
      const extended = await transactionHolds(sendTransaction, extendFoldParts(tableName, key, fold, o));
      return extended ? { ok: true } : { ok: false, reason: "status_changed" };
    },

    async discardFold(key, foldId, from, reason, at) {
      const discarded = await conditionHolds(() => client.send(new UpdateCommand(discardFoldParams(tableName, key, foldId, from, reason, at))));
      return discarded ? { ok: true } : { ok: false, reason: "status_changed" };
    },

    getMemory: (key, memoryId) => readMemory(ctx, key, memoryId),

    async markBlockRefused(key, memoryId, refused) {
      // A condition on the block's flag: an erased memory is never written again, a note never twice.
      const params = guarded(
        { TableName: tableName, Key: { pk: processPk(key), sk: memorySk(memoryId) } },
        { expression: "SET metadata.providerFold.refused = :r", values: { ":r": refused } },
        { expression: "metadata.providerFold.#block = :yes AND attribute_not_exists(metadata.providerFold.refused)", names: { "#block": "block" }, values: { ":yes": true } },
      );
      return conditionHolds(() => client.send(new UpdateCommand(params)));
    },

    async listMemories(key) {
      const { items } = await queryAll(client, listMemoriesParams(tableName, key));
      return items.map((i) => toMemory(readItem(MemoryItem, i)));
    },

    async supersede(key, oldId, newId, at) {
      try {
        await client.send(
          new UpdateCommand({ ...supersedeUpdate(tableName, key, oldId, newId, at), ReturnValuesOnConditionCheckFailure: "ALL_OLD" }),
        );
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: failedItem(e, MemoryItem) ? "already_superseded" : "not_found" };
      }
    },
  };
}
