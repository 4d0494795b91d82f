/**
 * Compaction write cost: round trips and write capacity to fold 10, 100 and 1,000 messages with
 * the real `compactIfNeeded` (lease, offline summary, commit transaction, roll-forward), against
 * the floor of ceil((n+3)/100) + 1 write round trips, with the roll-forward in guarded
 * transactions (the service's) and, side by side, in single-item writes (the earlier path).
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * **Setup.** For each size n there is a process with a prior active summary, a pinned first message,
 * n foldable messages and 5 trailing messages. The trailing 5 are the HARD anchor, and the last of them
 * is the triggering USER turn. Everything is seeded with BatchWriteItem.
 *
 * **Measured run.** The real `compactIfNeeded(..., { force: "HARD" })` with the offline summarizer. It
 * folds exactly n messages: lease, summary (in chunks of `maxSourceChars`), commit transaction,
 * roll-forward, re-read. Each size runs twice in the same run: with the service's roll-forward
 * (guarded transactions) and with the earlier single-item roll-forward
 * (`bench/support/single-item-roll-forward.ts`, the baseline). One warm-up fold per path runs first
 * and is not recorded.
 *
 * **How it is counted.** Each command sent through the document client is counted, because the bench
 * wraps the client's `send`, and each command asks for ReturnConsumedCapacity. Round trips and
 * capacity are the same in every repeat; latency is the median. "WCU priced" prices each write by
 * AWS's rules from the items' sizes, because DynamoDB Local under-reports transactions.
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { META_SK, processPk } from "../core/adapters/dynamodb/keys.js";
import { TRANSACTION_LIMIT } from "../core/adapters/dynamodb/store.js";
import { createOfflineSummarizer } from "../core/adapters/llm/offline-summarizer.js";
import type { Message } from "../core/domain/model.js";
import type { Summarizer } from "../core/ports/summarizer.js";
import { compactIfNeeded } from "../core/services/compaction/compaction.js";
import { type BenchContext, bySize, envInt, envInts, requireEndpoint } from "./support/context.js";
import { batchPut, freshTable, itemSize, partitionItems, priceWrites, wcuFor, type BenchTable } from "./support/dynamo.js";
import type { SectionResult, Target } from "./support/report.js";
import {
  benchDeps,
  idFactory,
  makeMessage,
  makeSummary,
  messageItem,
  observedStore,
  prng,
  summaryItem,
  syntheticText,
} from "./support/service.js";
import { fmt, median, ms, sum, times } from "./support/stats.js";
import { withSingleItemRollForward } from "./support/single-item-roll-forward.js";
import type { ServiceDeps } from "../core/services/deps.js";

/** The fewest write round trips a commit of n messages can take: ceil((n+3)/100) transactions, plus one. */
const commitFloor = (n: number) => Math.ceil((n + 3) / TRANSACTION_LIMIT) + 1;

/** Trailing messages that stay (the HARD anchor is 5; the last one is the triggering USER turn). */
const ANCHOR = 5;

type RollForwardPath = "transactions" | "single items";

interface FoldSample {
  path: RollForwardPath;
  n: number;
  folded: number;
  ms: number;
  summarizerMs: number;
  summarizerCalls: number;
  roundTrips: number;
  reads: number;
  writeRoundTrips: number;
  /** Lease acquire and release (UpdateItem on META); the release after a commit fails its condition. */
  leaseWrites: number;
  failedWrites: number;
  transactions: number;
  transactionItems: number;
  singleWrites: number;
  itemWrites: number;
  wcuReported: number;
  rcuReported: number;
  wcuPriced: number;
  wcuPricedFloor: number;
}

async function seedFold(t: BenchTable, n: number, run: number) {
  const key = { tenantId: "bench", processId: `fold-${n}-${run}` };
  const pk = processPk(key);
  const { store } = observedStore(t);
  await t.recorder.quietly(() => store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "bench" }, "2025-01-01T00:00:00.000Z"));
  const rand = prng(n + 5);
  const msgId = idFactory("msg");
  const memId = idFactory("mem");
  let clock = Date.UTC(2025, 0, 1);
  const tick = () => new Date((clock += 60_000));
  const priorAt = tick();
  const prior = makeSummary(key, memId(priorAt), priorAt, syntheticText(rand, 1600), []);
  const messages: Message[] = [];
  // A pinned first USER message (auto-pin) that every fold spares, then n foldable, then the anchor.
  const total = 1 + n + ANCHOR;
  for (let i = 0; i < total; i++) {
    const at = tick();
    const role = i === total - 1 ? "USER" : i % 2 === 0 ? "USER" : "ASSISTANT";
    const text = syntheticText(rand, role === "USER" ? 250 : 900);
    messages.push(makeMessage(key, msgId(at), at, role, text, { tags: i === 0 ? ["STRENGTH:pinned"] : [] }));
  }
  await batchPut(t, [summaryItem(key, prior), ...messages.map((m) => messageItem(key, m))]);
  await t.recorder.quietly(() =>
    t.client.send(
      new UpdateCommand({
        TableName: t.tableName,
        Key: { pk, sk: META_SK },
        UpdateExpression: "SET activeSummaryId = :s, version = :v, firstUserMessageId = :u",
        ExpressionAttributeValues: { ":s": prior.id, ":v": 1, ":u": messages[0]!.id },
      }),
    ),
  );
  return { key, pk };
}

function timedSummarizer(inner: Summarizer) {
  const stats = { calls: 0, ms: 0 };
  const summarizer: Summarizer = {
    provider: inner.provider,
    model: inner.model,
    contextWindow: inner.contextWindow,
    maxOutputTokens: inner.maxOutputTokens,
    async summarize(input) {
      const start = performance.now();
      try {
        return await inner.summarize(input);
      } finally {
        stats.calls++;
        stats.ms += performance.now() - start;
      }
    },
  };
  return { summarizer, stats };
}

export async function runCompactionCost(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const sizes = envInts("BENCH_FOLD_SIZES", [10, 100, 1_000]);
  const repeats = envInt("BENCH_FOLD_RUNS", bySize(ctx, { quick: 1, normal: 3, full: 5 }));
  const t = await freshTable(endpoint, "fold");
  const { store } = observedStore(t);
  const timing = timedSummarizer(createOfflineSummarizer());
  const paths: Record<RollForwardPath, ReturnType<typeof benchDeps>> = {
    transactions: benchDeps({ store, summarizer: timing.summarizer }),
    "single items": benchDeps({ store: withSingleItemRollForward(t, store), summarizer: timing.summarizer }),
  };

  // Warm-up folds (JIT, connections, each path's tunables cache), not recorded.
  for (const [i, deps] of Object.values(paths).entries()) {
    const { key } = await seedFold(t, 10, -1 - i);
    await compactIfNeeded(deps, key, { model: { contextWindow: 200_000 }, force: "HARD" });
  }
  const samples: FoldSample[] = [];
  for (let run = 0; run < repeats; run++) {
    for (const [path, deps] of Object.entries(paths) as [RollForwardPath, ServiceDeps][]) {
      for (const n of sizes) {
        const { key, pk } = await seedFold(t, n, run * 2 + (path === "transactions" ? 0 : 1));
        t.recorder.reset();
        const calls = timing.stats.calls;
        const summarizerMs = timing.stats.ms;
        const start = performance.now();
        const result = await compactIfNeeded(deps, key, { model: { contextWindow: 200_000 }, force: "HARD" });
        const elapsed = performance.now() - start;
        const records = [...t.recorder.records];
        if (!result.compacted || result.compactedMessages !== n) {
          throw new Error(`fold of ${n} compacted ${result.compactedMessages} (${result.reason ?? "no reason"})`);
        }
        // Sizes after the fold, for the price model (an archive grows an item by a few bytes).
        const sizes = new Map((await partitionItems(t, pk)).map((i) => [String(i.sk), itemSize(i)]));
        const sizeOf = (_pk: string, sk: string) => sizes.get(sk) ?? 1024;
        const writes = records.filter((r) => r.write);
        const txs = writes.filter((r) => r.name === "TransactWrite");
        // The floor: lease + the commit's items (memory, prior summary, META, n archives) in
        // ceil(n/100) transactions, every archive also removing its LSI entry; all priced x2.
        const memorySk = `S#${result.memoryId}`;
        // Messages in creation order: the pinned first one, the n folded, the anchor.
        const messageSizes = [...sizes.entries()].filter(([sk]) => sk.startsWith("M#")).map(([, b]) => b);
        const foldedSizes = messageSizes.slice(1, 1 + n);
        const metaBytes = sizes.get(META_SK) ?? 300;
        const priorSk = [...sizes.keys()].find((sk) => sk.startsWith("S#") && sk !== memorySk) ?? "";
        const floor =
          2 * wcuFor(metaBytes) + // lease acquire: table + LSI entry of META
          2 * 2 * (wcuFor(sizes.get(memorySk) ?? 0) + wcuFor(sizes.get(priorSk) ?? 0) + wcuFor(metaBytes)) +
          2 * 2 * sum(foldedSizes.map(wcuFor));
        samples.push({
          path,
          n,
          folded: result.compactedMessages,
          ms: elapsed,
          summarizerMs: timing.stats.ms - summarizerMs,
          summarizerCalls: timing.stats.calls - calls,
          roundTrips: records.length,
          reads: records.filter((r) => !r.write).length,
          writeRoundTrips: writes.length,
          leaseWrites: writes.filter((r) => r.name === "Update" && /leaseOwner/.test(r.expression ?? "") && !/archivedInMemoryId/.test(r.expression ?? "")).length,
          failedWrites: writes.filter((r) => !r.ok).length,
          transactions: txs.length,
          transactionItems: sum(txs.map((r) => r.targets.length)),
          singleWrites: writes.length - txs.length,
          itemWrites: sum(writes.map((r) => r.targets.length)),
          wcuReported: sum(writes.map((r) => r.capacity)),
          rcuReported: sum(records.filter((r) => !r.write).map((r) => r.capacity)),
          wcuPriced: priceWrites(records, sizeOf).total,
          wcuPricedFloor: floor,
        });
        ctx.log(`compaction-cost: folded ${fmt(n)} (${path}) in ${ms(elapsed)} (${records.length} round trips)`);
      }
    }
  }

  const rows = (Object.keys(paths) as RollForwardPath[]).flatMap((path) =>
    sizes.map((n) => {
      const s = samples.filter((x) => x.n === n && x.path === path);
      const first = s[0]!;
      const floorTx = commitFloor(n);
      return { ...first, ms: median(s.map((x) => x.ms)), summarizerMs: median(s.map((x) => x.summarizerMs)), floorTx };
    }),
  );

  const commitWrites = (r: (typeof rows)[number]) => r.writeRoundTrips - r.leaseWrites;
  const targets: Target[] = rows
    .filter((r) => r.path === "transactions")
    .map((r) => ({
      name: `commit write round trips to fold ${fmt(r.n)} vs floor ceil((n+3)/100) + 1 = ${r.floorTx}`,
      target: "at or below the floor",
      measured: `${fmt(commitWrites(r))} (single items: ${fmt(commitWrites(rows.find((x) => x.n === r.n && x.path === "single items")!))})`,
      met: commitWrites(r) <= r.floorTx,
    }));

  return {
    id: "compaction-cost",
    title: "Compaction write cost (DynamoDB Local)",
    command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only compaction-cost`,
    tables: [
      {
        title: `Real compactIfNeeded (force HARD, offline summarizer, prior summary superseded); latency = median of ${repeats}`,
        columns: ["roll-forward", "folded", "round trips", "reads", "writes", "lease writes", "commit writes", "transactions (items)", "single-item writes", "floor ceil((n+3)/100)+1", "commit writes / floor", "WCU reported (Local)", "WCU priced", "WCU priced, all in floor txs", "priced / floor txs", "summarizer calls", "latency (summarizer)"],
        rows: rows.map((r) => [
          r.path,
          fmt(r.n),
          fmt(r.roundTrips),
          fmt(r.reads),
          fmt(r.writeRoundTrips),
          `${fmt(r.leaseWrites)}${r.failedWrites ? ` (${r.failedWrites} failed)` : ""}`,
          fmt(commitWrites(r)),
          `${fmt(r.transactions)} (${fmt(r.transactionItems)})`,
          fmt(r.singleWrites),
          fmt(r.floorTx),
          times(commitWrites(r) / r.floorTx),
          fmt(r.wcuReported),
          fmt(r.wcuPriced),
          fmt(r.wcuPricedFloor),
          times(r.wcuPriced / r.wcuPricedFloor, 2),
          fmt(r.summarizerCalls),
          `${ms(r.ms)} (${ms(r.summarizerMs)})`,
        ]),
      },
    ],
    targets,
    notes: [
      "Round trips are commands sent through the document client (its `send` is wrapped); reads are the active-view Queries (before and after), the tunables GetItems and the roll-forward's GetItems. Lease writes are the conditional acquire on META and, when one is sent, the release (a failed conditional release still costs a round trip and a write; the column counts them). Commit writes are everything else: the commit transaction, the roll-forward's single-item archives and the pending-marker clear.",
      "The floor: the commit transaction carries the new memory, the superseded summary, META and as many archives as fit, so n archives need ceil((n+3)/100) transactions; one more round trip is allowed because every roll-forward transaction also carries META's marker and a check of the memory's status (2 of its 100 items).",
      "'WCU reported' sums the ConsumedCapacity DynamoDB Local returns; it under-reports TransactWriteItems (about 6 units for a 20-item transaction of 2.5 KB items). 'WCU priced' applies AWS's rules to the same writes from the items' sizes: 1 WCU per started KB, x2 inside a transaction, plus the LSI entry a write puts, rewrites (META, the active summary) or removes (an archived message).",
      `The commit transaction holds the memory, the superseded summary, META and ${TRANSACTION_LIMIT - 3} archives. 'transactions': the roll-forward archives the rest ${TRANSACTION_LIMIT - 2} per transaction, each moving META's marker on (the last one clears it) only while the marker and the memory's OK status are as read. 'single items': the earlier path, conditional single-item UpdateItems 16 at a time and a separate clear of the marker, measured in the same run as the baseline.`,
    ],
    data: { sizes, repeats, samples },
  };
}
