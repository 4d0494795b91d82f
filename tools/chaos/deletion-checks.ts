/**
 * The invariant of a deleted process (docs/api.md, "Deleting a process"): once a DELETE answered
 * 204 twice, nothing of the process is left in the table but its bare tombstone, and nothing
 * appears later. Read straight from the table (the store's own reads refuse a deleted process):
 * its partition, strongly consistent, and the inbox items listed under it.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { inboxByProcess, processPk } from "../../core/adapters/dynamodb/keys.js";
import { where, type ChaosRun, type Engine } from "./run-state.js";

/** What a tombstone no longer carries once its process is erased. */
export const GONE_FROM_TOMBSTONE = ["name", "title", "firstUserMessageId", "activeSummaryId", "lsi1sk", "gsi1pk", "gsi2pk"];

/** Violations when the engine's deleted process has anything left; `after` says when it was read. */
export async function deletionViolations(run: ChaosRun, e: Engine, after: string): Promise<string[]> {
  const { client, tableName } = run.table;
  const label = `deleted process ${where(e)}, after ${after}`;
  const own = await client.send(
    new QueryCommand({ TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": processPk(e.key) }, ConsistentRead: true }),
  );
  const v: string[] = [];
  for (const item of own.Items ?? []) {
    if (item.sk !== "META") v.push(`${label}: item ${String(item.sk)} exists`);
    else if (item.deletion !== "DELETED") v.push(`${label}: the tombstone is ${String(item.deletion)}, not DELETED`);
    else for (const field of GONE_FROM_TOMBSTONE) if (field in item) v.push(`${label}: the tombstone still has ${field}`);
  }
  if (!(own.Items ?? []).some((i) => i.sk === "META")) v.push(`${label}: the tombstone is gone`);
  const inbox = await client.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: "gsi2",
      KeyConditionExpression: "gsi2pk = :pk",
      ExpressionAttributeValues: { ":pk": inboxByProcess(e.key.tenantId, e.key.processId) },
    }),
  );
  for (const item of inbox.Items ?? []) v.push(`${label}: inbox item ${String(item.pk)} exists`);
  return v;
}
