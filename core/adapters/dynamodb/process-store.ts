/** The process and settings ports over the META and SETTINGS items (inputs in process-params.ts). */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { ProcessKey, ProcessStore, SettingsStore } from "../../ports/store.js";
import { processDeleted } from "../../domain/errors.js";
import { conditionHolds, isConditionFailure } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { MetaItem, SettingsItem, readItem, toProcess, toState } from "./items.js";
import { encodeCursor } from "./paging.js";
import { addMetaMapParams, getMetaParams, getSettingsParams, listProcessesParams, putSettingsParams, recordTurnParams, upsertProcessParams } from "./process-params.js";

/** The META item of a process, parsed; null when the process does not exist. */
export async function readMeta({ client, tableName }: StoreContext, key: ProcessKey): Promise<MetaItem | null> {
  const out = await client.send(new GetCommand(getMetaParams(tableName, key)));
  return out.Item ? readItem(MetaItem, out.Item) : null;
}

/** Adds META's map to a META written before the map was; false when the process is gone or deleted. */
export const addMetaMap = ({ client, tableName }: StoreContext, key: ProcessKey) => conditionHolds(() => client.send(new UpdateCommand(addMetaMapParams(tableName, key))));

export function createProcessStore(ctx: StoreContext): ProcessStore & SettingsStore {
  const { client, tableName } = ctx;
  return {
    async upsertProcess(tenantId, input, at) {
      try {
        const out = await client.send(new UpdateCommand(upsertProcessParams(tableName, tenantId, input, at)));
        return toProcess(readItem(MetaItem, out.Attributes));
      } catch (e) {
        // Only a deletion tombstone fails the upsert's condition: a deleted id is never used again.
        if (isConditionFailure(e)) throw processDeleted(input.processId);
        throw e;
      }
    },

    async getProcess(key) {
      const meta = await readMeta(ctx, key);
      // A deleted process is gone for every reader (docs/api.md, "Deleting a process").
      return meta && meta.deletedAt === undefined ? toState(meta) : null;
    },

    async recordTurn(key, record) {
      const write = () => conditionHolds(() => client.send(new UpdateCommand(recordTurnParams(tableName, key, record))));
      // A META written before its map (conditions.ts) gets it, once; a missing process fails twice.
      return (await write()) || ((await addMetaMap(ctx, key)) && write());
    },

    async listProcesses(tenantId, options) {
      const out = await client.send(new QueryCommand(listProcessesParams(tableName, tenantId, options)));
      return {
        items: (out.Items ?? []).map((i) => toProcess(readItem(MetaItem, i))),
        nextCursor: encodeCursor(out.LastEvaluatedKey),
      };
    },

    async getSettings(tenantId, projectId) {
      const out = await client.send(new GetCommand(getSettingsParams(tableName, tenantId, projectId)));
      return out.Item ? readItem(SettingsItem, out.Item).settings : null;
    },

    async putSettings(tenantId, projectId, settings, at) {
      await client.send(new PutCommand(putSettingsParams(tableName, tenantId, projectId, settings, at)));
    },
  };
}
