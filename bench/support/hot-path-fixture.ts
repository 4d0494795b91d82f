/**
 * The hot-path benchmark's fixture: a process with the same active set and any number of archived
 * messages (seeded as folds with their superseded summaries), and the reads it is compared with.
 */
import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { META_SK, processPk } from "../../core/adapters/dynamodb/keys.js";
import type { Memory, Message } from "../../core/domain/model.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { batchPut, itemSize, type BenchTable } from "./dynamo.js";
import { idFactory, makeMessage, makeSummary, messageItem, observedStore, prng, summaryItem, syntheticText } from "./service.js";
import { sum } from "./stats.js";

export const ACTIVE_MESSAGES = 40;
/** Archived history is seeded as folds of this many messages, each with its (superseded) summary. */
export const FOLD = 100;
export const USER_CHARS = 250;
export const ASSISTANT_CHARS = 900;
export const SUMMARY_CHARS = 1600;
export const CONTEXT_WINDOW = 200_000;
export const ONE_MB = 1024 * 1024;

export interface Fixture {
  size: number;
  key: ProcessKey;
  pk: string;
  partitionItems: number;
  partitionBytes: number;
  metaBytes: number;
}

/** A 1-item base-table Query (META by sort key): what DynamoDB Local charges any Query for partition size. */
export async function controlQuery(t: BenchTable, fx: Fixture): Promise<number> {
  const start = performance.now();
  const out = await t.recorder.quietly(() =>
    t.client.send(
      new QueryCommand({
        TableName: t.tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :m)",
        ExpressionAttributeValues: { ":pk": fx.pk, ":m": META_SK },
        ConsistentRead: true,
      }),
    ),
  );
  if (out.Items?.length !== 1) throw new Error("control query expected META only");
  return performance.now() - start;
}

export interface NaiveSample {
  ms: number;
  rcu: number;
  scanned: number;
  pages: number;
  returned: number;
}

export interface SeedOptions {
  /** Default `hot-<size>`. */
  processId?: string;
  /** Changes each active message before it is written (the native-content benchmark gives them native content). */
  activeMessage?: (key: ProcessKey, m: Message, index: number) => Promise<Message>;
}

/**
 * A process with `size` archived messages in folds of `foldSize` (the newest fold's summary is the
 * active one) and the fixed active set.
 */
export async function seedProcess(t: BenchTable, size: number, foldSize = FOLD, options: SeedOptions = {}): Promise<Fixture> {
  const { store } = observedStore(t);
  const key = { tenantId: "bench", processId: options.processId ?? (foldSize === FOLD ? `hot-${size}` : `hot-${size}-fold-${foldSize}`) };
  const pk = processPk(key);
  await t.recorder.quietly(() => store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "bench" }, "2025-01-01T00:00:00.000Z"));
  const msgId = idFactory("msg");
  const memId = idFactory("mem");
  const history = prng(size + 11);
  let clock = Date.UTC(2025, 0, 1);
  const tick = (seconds = 60) => new Date((clock += seconds * 1000));
  const items: Record<string, unknown>[] = [];

  // Archived history: folds of FOLD messages, each folded into a summary that the next one superseded.
  const memories: Memory[] = [];
  for (let start = 0; start < size; start += foldSize) {
    const times = Array.from({ length: Math.min(foldSize, size - start) }, () => tick());
    const memoryAt = tick(30);
    const memoryId = memId(memoryAt);
    const fold: Message[] = times.map((at, i) => {
      const role = (start + i) % 2 === 0 ? "USER" : "ASSISTANT";
      const text = syntheticText(history, role === "USER" ? USER_CHARS : ASSISTANT_CHARS);
      return makeMessage(key, msgId(at), at, role, text, { archivedInMemoryId: memoryId });
    });
    items.push(...fold.map((m) => messageItem(key, m)));
    memories.push(makeSummary(key, memoryId, memoryAt, syntheticText(history, SUMMARY_CHARS), fold.map((m) => m.id)));
  }
  // The same active set for every size: one active summary, then ACTIVE_MESSAGES messages.
  const active = prng(7);
  if (memories.length === 0) {
    const at = tick(30);
    memories.push(makeSummary(key, memId(at), at, syntheticText(active, SUMMARY_CHARS), []));
  } else {
    // The newest summary's text is the same for every size too.
    const last = memories[memories.length - 1]!;
    memories[memories.length - 1] = { ...last, content: syntheticText(active, SUMMARY_CHARS) };
  }
  memories.forEach((m, i) => {
    const next = memories[i + 1];
    items.push(summaryItem(key, next ? { ...m, supersededAt: next.createdAt, supersededByMemoryId: next.id } : m));
  });
  const messages = Array.from({ length: ACTIVE_MESSAGES }, (_, i) => {
    const at = tick();
    const role = i % 2 === 0 ? "USER" : "ASSISTANT";
    const text = syntheticText(active, role === "USER" ? USER_CHARS : ASSISTANT_CHARS);
    return makeMessage(key, msgId(at), at, role, text, { tags: i === 0 ? ["STRENGTH:pinned"] : [] });
  });
  if (options.activeMessage) for (let i = 0; i < messages.length; i++) messages[i] = await options.activeMessage(key, messages[i]!, i);
  items.push(...messages.map((m) => messageItem(key, m)));
  await batchPut(t, items);
  const activeSummary = memories[memories.length - 1]!;
  await t.recorder.quietly(() =>
    t.client.send(
      new UpdateCommand({
        TableName: t.tableName,
        Key: { pk, sk: META_SK },
        UpdateExpression: "SET activeSummaryId = :s, version = :v, firstUserMessageId = :u",
        ExpressionAttributeValues: { ":s": activeSummary.id, ":v": memories.length, ":u": messages[0]!.id },
      }),
    ),
  );
  const meta = await t.recorder.quietly(() =>
    t.client.send(new GetCommand({ TableName: t.tableName, Key: { pk, sk: META_SK }, ConsistentRead: true })),
  );
  const metaBytes = itemSize(meta.Item ?? {});
  return {
    size,
    key,
    pk,
    partitionItems: items.length + 1,
    partitionBytes: sum(items.map(itemSize)) + metaBytes,
    metaBytes,
  };
}

/** Everything the naive design reads: the whole item collection, filtered to the replay. */
export async function naiveRead(t: BenchTable, fx: Fixture): Promise<NaiveSample> {
  const before = t.recorder.records.length;
  const start = performance.now();
  let returned = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await t.client.send(
      new QueryCommand({
        TableName: t.tableName,
        KeyConditionExpression: "pk = :pk",
        FilterExpression: "attribute_not_exists(archivedInMemoryId) AND attribute_not_exists(supersededAt)",
        ExpressionAttributeValues: { ":pk": fx.pk },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    returned += out.Items?.length ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  const elapsed = performance.now() - start;
  const records = t.recorder.records.slice(before);
  if (returned !== ACTIVE_MESSAGES + 2) throw new Error(`naive read returned ${returned} items, expected ${ACTIVE_MESSAGES + 2}`);
  return {
    ms: elapsed,
    rcu: sum(records.map((r) => r.capacity)),
    scanned: sum(records.map((r) => r.scanned ?? 0)),
    pages: records.length,
    returned,
  };
}
