/**
 * DynamoDB plumbing for the benchmarks: a fresh table per section, a document client whose `send`
 * is wrapped to count round trips and sum the capacity DynamoDB Local reports, fast seeding with
 * BatchWriteItem, and a size-based price model (AWS's published rules) for writes, because
 * DynamoDB Local under-reports the capacity of TransactWriteItems.
 */
import { randomUUID } from "node:crypto";
import { BatchWriteCommand, type BatchWriteCommandOutput, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { backoff, type BackoffPolicy } from "../../core/adapters/backoff.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { queryAll } from "../../core/adapters/dynamodb/paging.js";
import { tableIndexes } from "../../core/adapters/dynamodb/table.js";

/** Commands that accept ReturnConsumedCapacity. */
const DATA_PLANE = new Set([
  "GetItem", "Get", "PutItem", "Put", "UpdateItem", "Update", "DeleteItem", "Delete", "Query", "Scan",
  "BatchGetItem", "BatchGet", "BatchWriteItem", "BatchWrite", "TransactWriteItems", "TransactWrite",
  "TransactGetItems", "TransactGet",
]);
const WRITES = new Set(["Put", "Update", "Delete", "BatchWrite", "TransactWrite"]);

/** One item a write touched, for the price model. */
export interface WriteTarget {
  pk: string;
  sk: string;
  transactional: boolean;
  /** Put: the item written (its size is known up front). */
  item?: Record<string, unknown>;
  /** The write sets or removes the sparse index key. */
  touchesLsi: boolean;
  /** A transaction's ConditionCheck: reads the item, writes nothing (no index entry). */
  conditionOnly?: boolean;
}

export interface CommandRecord {
  /** Document-client command name without the `Command` suffix (`Query`, `TransactWrite`, ...). */
  name: string;
  write: boolean;
  ms: number;
  ok: boolean;
  /** Capacity units DynamoDB Local reported (table + indexes). */
  capacity: number;
  targets: WriteTarget[];
  /** UpdateExpression of a single-item update (tells a lease write from an archive). */
  expression?: string;
  /** Items a Query/Scan returned and examined. */
  count?: number;
  scanned?: number;
}

export interface Recorder {
  records: CommandRecord[];
  /** While paused, commands are sent but not recorded (seeding, resets). */
  paused: boolean;
  reset(): void;
  /** Runs `fn` with recording paused. */
  quietly<T>(fn: () => Promise<T>): Promise<T>;
}

type Capacity = { CapacityUnits?: number };

function capacityOf(out: { ConsumedCapacity?: Capacity | Capacity[] } | undefined): number {
  const c = out?.ConsumedCapacity;
  if (!c) return 0;
  return (Array.isArray(c) ? c : [c]).reduce((n, x) => n + (x.CapacityUnits ?? 0), 0);
}

const mentionsLsi = (expr: unknown) => typeof expr === "string" && expr.includes(tableIndexes.lsi1.sortKey);

function writeTargets(name: string, input: Record<string, any>): WriteTarget[] {
  const one = (op: Record<string, any>, kind: string, transactional: boolean): WriteTarget => {
    const key = kind === "Put" ? op.Item : op.Key;
    return {
      pk: String(key?.pk),
      sk: String(key?.sk),
      transactional,
      ...(kind === "Put" ? { item: op.Item } : {}),
      touchesLsi: kind === "Put" ? op.Item?.[tableIndexes.lsi1.sortKey] !== undefined : mentionsLsi(op.UpdateExpression),
      ...(kind === "ConditionCheck" ? { conditionOnly: true } : {}),
    };
  };
  if (name === "Put" || name === "Update" || name === "Delete") return [one(input, name, false)];
  if (name === "TransactWrite") {
    return (input.TransactItems ?? []).map((t: Record<string, any>) => {
      const kind = Object.keys(t)[0]!;
      return one(t[kind], kind, true);
    });
  }
  return [];
}

/**
 * Wraps `client.send` so every command is counted, asks DynamoDB for its consumed capacity
 * (ReturnConsumedCapacity INDEXES) and remembers which items writes touched.
 */
export function instrumentClient(client: DynamoDBDocumentClient): Recorder {
  const recorder: Recorder = {
    records: [],
    paused: false,
    reset() {
      recorder.records = [];
    },
    async quietly(fn) {
      const was = recorder.paused;
      recorder.paused = true;
      try {
        return await fn();
      } finally {
        recorder.paused = was;
      }
    },
  };
  const send = client.send.bind(client) as (command: unknown) => Promise<any>;
  (client as { send: unknown }).send = async (command: { constructor: { name: string }; input: Record<string, any> }) => {
    const name = command.constructor.name.replace(/Command$/, "");
    if (DATA_PLANE.has(name)) command.input.ReturnConsumedCapacity = "INDEXES";
    if (recorder.paused) return send(command);
    const start = performance.now();
    const record: CommandRecord = {
      name,
      write: WRITES.has(name),
      ms: 0,
      ok: true,
      capacity: 0,
      targets: writeTargets(name, command.input),
      ...(name === "Update" ? { expression: String(command.input.UpdateExpression) } : {}),
    };
    try {
      const out = await send(command);
      record.capacity = capacityOf(out);
      if (typeof out?.Count === "number") record.count = out.Count;
      if (typeof out?.ScannedCount === "number") record.scanned = out.ScannedCount;
      return out;
    } catch (e) {
      record.ok = false;
      throw e;
    } finally {
      record.ms = performance.now() - start;
      recorder.records.push(record);
    }
  };
  return recorder;
}

export interface BenchTable {
  client: DynamoDBDocumentClient;
  tableName: string;
  recorder: Recorder;
}

/** A new table with the service's layout in the running DynamoDB Local engine. */
export async function freshTable(endpoint: string, prefix: string): Promise<BenchTable> {
  const client = createDocumentClient({ endpoint, region: "us-east-1" });
  const tableName = `bench-${prefix}-${randomUUID().slice(0, 8)}`;
  await createTable(client, tableName);
  const recorder = instrumentClient(client);
  return { client, tableName, recorder };
}

/** Waits between retries of a seeding batch's unprocessed items. */
const SEED_BACKOFF: BackoffPolicy = { baseMs: 40, capMs: 1_000 };

/** BatchWriteItem in 25-item requests, `concurrency` at a time, retrying unprocessed items. */
export async function batchPut(
  t: BenchTable,
  items: readonly Record<string, unknown>[],
  concurrency = 4,
): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  let next = 0;
  const pause = backoff(SEED_BACKOFF);
  await t.recorder.quietly(() =>
    Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < batches.length) {
          const batch = batches[next++]!;
          let request: Record<string, any> | undefined = {
            [t.tableName]: batch.map((Item) => ({ PutRequest: { Item } })),
          };
          for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
            if (attempt > 0) await pause(attempt);
            const out: BatchWriteCommandOutput = await t.client.send(new BatchWriteCommand({ RequestItems: request }));
            request = out.UnprocessedItems;
          }
        }
      }),
    ),
  );
}

/** Every item of one partition (not recorded). */
export async function partitionItems(t: BenchTable, pk: string): Promise<Record<string, unknown>[]> {
  return t.recorder.quietly(async () => {
    const { items } = await queryAll(t.client, {
      TableName: t.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": pk },
      ConsistentRead: true,
    });
    return items;
  });
}

// ---------------------------------------------------------------------------------------------
// Item sizes and AWS prices (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/
// CapacityUnitCalculations.html): a write costs 1 WCU per started KB of the item, a transactional
// write 2; a strongly consistent read 1 RCU per started 4 KB (a Query sums its items first);
// a write that puts or removes an item's entry in a local secondary index costs the index write too.

function valueSize(v: unknown): number {
  if (v === null || v === undefined || typeof v === "boolean") return 1;
  if (typeof v === "string") return Buffer.byteLength(v, "utf8");
  if (typeof v === "number") {
    const digits = String(Math.abs(v)).replace(/[.-]|e.*$/g, "").replace(/^0+/, "").length;
    return Math.ceil(Math.max(1, digits) / 2) + 1;
  }
  if (Array.isArray(v)) return 3 + v.reduce((n: number, x) => n + valueSize(x) + 1, 0);
  if (typeof v === "object") {
    return 3 + Object.entries(v as Record<string, unknown>).reduce((n, [k, x]) => n + Buffer.byteLength(k) + valueSize(x) + 1, 0);
  }
  return Buffer.byteLength(String(v));
}

/** DynamoDB's size of an item: attribute names plus values. */
export function itemSize(item: Record<string, unknown>): number {
  return Object.entries(item).reduce((n, [k, v]) => (v === undefined ? n : n + Buffer.byteLength(k) + valueSize(v)), 0);
}

export const KB = 1024;
export const wcuFor = (bytes: number) => Math.max(1, Math.ceil(bytes / KB));
export const rcuForStrongRead = (bytes: number) => Math.max(1, Math.ceil(bytes / (4 * KB)));

export interface PricedWrites {
  /** WCU of the base table. */
  table: number;
  /** WCU of the sparse LSI (entries put or removed). */
  index: number;
  total: number;
  itemWrites: number;
}

/**
 * Prices the recorded writes with AWS's rules. `sizeOf(pk, sk)` gives an item's size after the
 * writes (read back from the table); an archive update grows an item by a few bytes, so the final
 * size is the larger of before and after. Transactional writes count double, index writes included;
 * a single write whose condition failed costs its table write.
 */
export function priceWrites(records: readonly CommandRecord[], sizeOf: (pk: string, sk: string) => number): PricedWrites {
  let table = 0;
  let index = 0;
  let itemWrites = 0;
  for (const r of records) {
    if (!r.write) continue;
    if (!r.ok) {
      // A failed conditional write still costs the table write (AWS: size of the existing item).
      if (r.name !== "TransactWrite") for (const t of r.targets) table += wcuFor(sizeOf(t.pk, t.sk));
      continue;
    }
    for (const t of r.targets) {
      const bytes = t.item ? itemSize(t.item) : sizeOf(t.pk, t.sk);
      const factor = t.transactional ? 2 : 1;
      itemWrites++;
      table += wcuFor(bytes) * factor;
      // META and the active summary carry lsi1sk (projection ALL): any update rewrites the entry.
      if (!t.conditionOnly && (t.touchesLsi || t.sk === "META")) index += wcuFor(bytes) * factor;
    }
  }
  return { table, index, total: table + index, itemWrites };
}
