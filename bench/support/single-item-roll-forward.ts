/**
 * The roll-forward as it was before it went in guarded transactions: every archive past the
 * commit transaction a single-item UpdateItem, 16 at a time, then a conditional clear of META's
 * marker. Kept here only as the compaction-cost benchmark's baseline, so both paths are measured
 * side by side in one run; the service never uses it.
 */
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHolds } from "../../core/adapters/dynamodb/conditions.js";
import { META_SK, processPk } from "../../core/adapters/dynamodb/keys.js";
import { archiveUpdate } from "../../core/adapters/dynamodb/message-params.js";
import type { Store } from "../../core/ports/store.js";
import type { BenchTable } from "./dynamo.js";

const WAVE = 16;

export function withSingleItemRollForward(t: BenchTable, inner: Store): Store {
  return {
    ...inner,
    async finishPendingArchive(key, memoryId) {
      const Key = { pk: processPk(key), sk: META_SK };
      const [out, memory] = await Promise.all([
        t.client.send(new GetCommand({ TableName: t.tableName, Key, ConsistentRead: true })),
        inner.getMemory(key, memoryId),
      ]);
      const marker = out.Item?.pendingArchive as string | undefined;
      if (!marker || !memory) return { archived: 0, missing: [] };
      const rest = memory.sourceRefs.slice(Number(out.Item?.pendingArchiveFrom ?? 0));
      let archived = 0;
      for (let i = 0; i < rest.length; i += WAVE) {
        const wave = rest.slice(i, i + WAVE).map((id) =>
          conditionHolds(() => t.client.send(new UpdateCommand(archiveUpdate(t.tableName, key, id, memoryId, memory.createdAt)))),
        );
        archived += (await Promise.all(wave)).filter(Boolean).length;
      }
      await conditionHolds(() =>
        t.client.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key,
            UpdateExpression: "REMOVE pendingArchive, pendingArchiveFrom",
            ConditionExpression: "pendingArchive = :pm",
            ExpressionAttributeValues: { ":pm": marker },
          }),
        ),
      );
      return { archived, missing: [] };
    },
  };
}
