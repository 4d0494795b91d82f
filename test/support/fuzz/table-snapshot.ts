/**
 * The full contents of one table (strongly consistent Scan, every page), in a stable order, so a
 * test can assert that a rejected request wrote nothing at all, or that a tenant's items did not
 * change. Small test tables only.
 */
import { ScanCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

export type Item = Record<string, unknown>;

export async function scanTable(client: DynamoDBDocumentClient, tableName: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.sort((a, b) => key(a).localeCompare(key(b)));
}

const key = (i: Item) => `${String(i.pk)}\u0000${String(i.sk)}`;

/** A canonical string of the table (keys sorted), cheap to compare. */
export async function tableFingerprint(client: DynamoDBDocumentClient, tableName: string, filter: (i: Item) => boolean = () => true) {
  const items = (await scanTable(client, tableName)).filter(filter);
  return JSON.stringify(items.map(canonical));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Set) return [...value].map(canonical).sort();
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Items of one tenant (keys start with `T#<tenant>#`). */
export const ofTenant = (tenantId: string) => (i: Item) => String(i.pk).startsWith(`T#${tenantId}#`);
