/** The memory port over the memory items: summaries, failures and background folds (inputs in compaction-params.ts). */
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Memory } from "../../domain/model.js";
import type { MemoryStore, ProcessKey } from "../../ports/store.js";
import {
  discardFoldParams,
  getMemoryParams,
  listMemoriesParams,
  putMemoryParams,
  storeFoldParams,
  supersedeUpdate,
} from "./compaction-params.js";
import { conditionHolds, failedItem, isConditionFailure } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { MemoryItem, readItem, toMemory } from "./items.js";
import { sizeChecked } from "./item-size.js";
import { queryAll } from "./paging.js";

/** One memory, sourceRefs included (strongly consistent); null when there is none. */
export async function readMemory({ client, tableName }: StoreContext, key: ProcessKey, memoryId: string): Promise<Memory | null> {
  const out = await client.send(new GetCommand(getMemoryParams(tableName, key, memoryId)));
  return out.Item ? toMemory(readItem(MemoryItem, out.Item)) : null;
}

export function createMemoryStore(ctx: StoreContext): MemoryStore {
  const { client, tableName } = ctx;
  return {
    async putMemory(key, memory) {
      await sizeChecked(`memory '${memory.id}'`, () => client.send(new PutCommand(putMemoryParams(tableName, key, memory))));
    },

    async storeFold(key, fold, expect) {
      const put = () => client.send(new PutCommand(storeFoldParams(tableName, key, fold, expect)));
      const stored = await conditionHolds(() => sizeChecked(`fold '${fold.id}'`, put));
      return stored ? { ok: true } : { ok: false, reason: "status_changed" };
    },

    async discardFold(key, foldId, from, reason, at) {
      const discarded = await conditionHolds(() => client.send(new UpdateCommand(discardFoldParams(tableName, key, foldId, from, reason, at))));
      return discarded ? { ok: true } : { ok: false, reason: "status_changed" };
    },

    getMemory: (key, memoryId) => readMemory(ctx, key, memoryId),

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
