/**
 * The check that ends a tenant's erasure (docs/api.md, "Deleting a process"): what is still stored
 * of the tenant besides tombstones. It reads every place the tenant's items live: the partition of
 * each process the erasure handled, the tenant's listings (live, unlisted, inbox: indexes, so each
 * entry is read again from the table before it counts), and its settings and usage partitions. An
 * index entry whose item is gone is lag, not a leftover.
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { WRITE_CONCURRENCY } from "../../ports/store.js";
import { inBatches, type StoreContext } from "./context.js";
import { partitionParams, unlistedProcessesParams } from "./erasure-params.js";
import { listInboxParams } from "./inbox-params.js";
import { META_SK, processPk, settingsPk, TENANT_ERASED_SK, usagePk } from "./keys.js";
import { queryAll } from "./paging.js";
import { listProcessesParams } from "./process-params.js";

const describe = (i: Record<string, unknown>) => `${String(i.pk)} / ${String(i.sk)}`;

export async function tenantLeftovers(ctx: StoreContext, tenantId: string, processIds: readonly string[]): Promise<string[]> {
  const { client, tableName } = ctx;
  const left: string[] = [];
  const partition = async (pk: string, keep: (i: Record<string, unknown>) => boolean) => {
    const { items } = await queryAll(client, { ...partitionParams(tableName, pk), ProjectionExpression: "pk, sk, deletion" });
    for (const i of items) if (!keep(i)) left.push(i.sk === META_SK ? `${describe(i)} (${String(i.deletion ?? "live")})` : describe(i));
  };
  const bareTombstone = (i: Record<string, unknown>) => i.sk === META_SK && i.deletion === "DELETED";
  const ids = new Set(processIds);
  // Whatever the listings still show is checked too, should it not be among the ids handled.
  const listed = [
    { ...listProcessesParams(tableName, tenantId, { limit: 100 }), ProjectionExpression: "processId" },
    { ...unlistedProcessesParams(tableName, tenantId, 100), ProjectionExpression: "processId" },
  ];
  for (const read of listed) for (const i of (await queryAll(client, read)).items) ids.add(String(i.processId));
  await inBatches([...ids], WRITE_CONCURRENCY, (processId) => partition(processPk({ tenantId, processId }), bareTombstone));
  await partition(settingsPk(tenantId), () => false);
  await partition(usagePk(tenantId), (i) => i.sk === TENANT_ERASED_SK);
  const inbox = (await queryAll(client, { ...listInboxParams(tableName, tenantId, {}), ProjectionExpression: "pk, sk" })).items;
  await inBatches(inbox, WRITE_CONCURRENCY, async (i) => {
    const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: i.pk, sk: i.sk }, ConsistentRead: true }));
    if (out.Item) left.push(describe(out.Item));
  });
  return left.sort();
}
