/**
 * Per-turn hot path against DynamoDB Local: the real `runTurn` (append + one strongly consistent
 * Query of the sparse LSI, no compaction) on processes with the same active set and 0 ... 50,000
 * archived messages, next to a naive "query the whole partition and filter" read, side by side.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * **Setup.** Four processes share one table. They hold 0, 1,000, 10,000 and 50,000 archived messages
 * and the same active set: META, one active summary (~1,600 chars), and 40 messages (USER ~250 chars,
 * ASSISTANT ~900 chars, the first one pinned). The archived history is seeded with BatchWriteItem from
 * the store's own item builders (`messageToItem`, `memoryToItem`). It is laid out as folds of 100
 * messages, each with its superseded summary, so the partition looks like one that has been through
 * many compactions.
 *
 * **Measured turn.** The real `runTurn` on the composition root's `createDeps` over the DynamoDB store,
 * with a 250-char USER message and a 200k window, so it never compacts. After each turn, outside the
 * timing, the bench deletes its probe message so that every run sees the identical active set.
 *
 * **In the same round.** Two more reads run alongside each turn:
 * - the naive read: Query(pk) over the whole item collection, with a FilterExpression down to the
 *   replay, strongly consistent;
 * - a control Query for META alone (1 item, base table).
 *
 * The sizes run interleaved, in rotating order, for 60 rounds after 3 warm-up rounds. The naive read
 * runs 10 times at 10,000 and 5 times at 50,000.
 *
 * **Where the numbers come from.**
 * - Items and RCU are what DynamoDB Local reports through ReturnConsumedCapacity
 *   (`ActiveView.consumedCapacity` and `itemsRead` for the replay read).
 * - The turn's WCU is priced from item sizes with AWS's rules, because DynamoDB Local under-reports
 *   transactions (bench/compaction-cost.ts).
 * - "vs 0 archived" is the median, over the rounds, of each round's ratio to the 0-archived run. Pairing
 *   runs by round cancels out load from other work on the machine.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { messageSk } from "../core/adapters/dynamodb/keys.js";
import { runTurn } from "../core/services/turn.js";
import { type BenchContext, bySize, envInt, envInts, requireEndpoint } from "./support/context.js";
import { freshTable, priceWrites } from "./support/dynamo.js";
import type { SectionResult, Target } from "./support/report.js";
import { benchDeps, observedStore, prng, syntheticText } from "./support/service.js";
import {
  ACTIVE_MESSAGES,
  ASSISTANT_CHARS,
  CONTEXT_WINDOW,
  controlQuery,
  FOLD,
  naiveRead,
  ONE_MB,
  seedProcess,
  USER_CHARS,
  type Fixture,
  type NaiveSample,
} from "./support/hot-path-fixture.js";
import { delta, fmt, median, ms, percentile, sum, times } from "./support/stats.js";

interface TurnSample {
  ms: number;
  roundTrips: number;
  readCapacity: number;
  pricedWcu: number;
  avMs: number;
  avRcu: number;
  avItems: number;
}

export async function runHotPath(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const sizes = envInts("BENCH_HOT_SIZES", ctx.quick ? [0, 1_000, 5_000] : [0, 1_000, 10_000, 50_000]);
  const runs = envInt("BENCH_HOT_RUNS", bySize(ctx, { quick: 10, normal: 30, full: 60 }));
  // The naive read of a large partition takes seconds per run and its RCU is the same every run.
  const naiveRuns = (size: number) => Math.min(runs, size >= 50_000 ? bySize(ctx, { quick: 5, normal: 3, full: 5 }) : size >= 10_000 ? 10 : runs);
  const t = await freshTable(endpoint, "hot");
  const { store, activeViews } = observedStore(t);
  const deps = benchDeps({ store });

  const fixtures: Fixture[] = [];
  for (const size of sizes) {
    const start = performance.now();
    fixtures.push(await seedProcess(t, size));
    ctx.log(`hot-path: seeded ${fmt(size)} archived messages in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  }

  const probe = syntheticText(prng(99), USER_CHARS);
  const turn = async (fx: Fixture): Promise<TurnSample> => {
    const before = t.recorder.records.length;
    const views = activeViews.length;
    const start = performance.now();
    const result = await runTurn(deps, fx.key, { model: { contextWindow: CONTEXT_WINDOW }, message: { role: "USER", content: probe } });
    const elapsed = performance.now() - start;
    const records = t.recorder.records.slice(before);
    const view = activeViews[views];
    if (result.compaction.mode !== "NONE" || activeViews.length !== views + 1 || !view) {
      throw new Error(`hot-path turn was not a plain turn (mode ${result.compaction.mode}, ${activeViews.length - views} active views)`);
    }
    if (result.messages.length !== ACTIVE_MESSAGES + 1) throw new Error(`active set has ${result.messages.length} messages`);
    // Bench-only reset outside the timing: remove the probe so every run sees the identical active set.
    const appended = result.messages[result.messages.length - 1]!;
    await t.recorder.quietly(() =>
      t.client.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: fx.pk, sk: messageSk(appended.id) } })),
    );
    return {
      ms: elapsed,
      roundTrips: records.length,
      readCapacity: sum(records.filter((r) => !r.write).map((r) => r.capacity)),
      pricedWcu: priceWrites(records, () => fx.metaBytes).total,
      avMs: view.ms,
      avRcu: view.consumedCapacity,
      avItems: view.itemsRead,
    };
  };

  // Warm-up (JIT, connections, tunables cache), not recorded.
  for (let i = 0; i < 3; i++) for (const fx of fixtures) await turn(fx);
  const small = fixtures.find((f) => f.size <= 1_000);
  if (small) await naiveRead(t, small);

  const turns = new Map<number, TurnSample[]>(sizes.map((s) => [s, []]));
  const naive = new Map<number, NaiveSample[]>(sizes.map((s) => [s, []]));
  const control = new Map<number, number[]>(sizes.map((s) => [s, []]));
  const started = performance.now();
  for (let round = 0; round < runs; round++) {
    // Rotate the order so that no size always runs first (or right after the expensive one).
    const order = fixtures.map((_, i) => fixtures[(i + round) % fixtures.length]!);
    for (const fx of order) {
      turns.get(fx.size)!.push(await turn(fx));
      control.get(fx.size)!.push(await controlQuery(t, fx));
      if (round < naiveRuns(fx.size)) naive.get(fx.size)!.push(await naiveRead(t, fx));
    }
  }
  ctx.log(`hot-path: ${runs} rounds in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // Whether the active summary's sourceRefs ride along with the replay read (they should not): one
  // process whose newest fold was 1,000 messages, measured against the same active set.
  const bigFold = sizes.includes(1_000) ? await seedProcess(t, 1_000, 1_000) : undefined;
  const bigFoldViews: Array<{ rcu: number; items: number }> = [];
  if (bigFold) {
    for (let i = 0; i < 3; i++) {
      const view = await t.recorder.quietly(() => store.activeView(bigFold.key));
      bigFoldViews.push({ rcu: view?.consumedCapacity ?? Number.NaN, items: view?.itemsRead ?? Number.NaN });
    }
  }

  const baseTurns = turns.get(fixtures[0]!.size)!;
  const baseControl = control.get(fixtures[0]!.size)!;
  const rows = fixtures.map((fx) => {
    const ts = turns.get(fx.size)!;
    const ns = naive.get(fx.size)!;
    return {
      size: fx.size,
      partitionItems: fx.partitionItems,
      partitionMB: fx.partitionBytes / ONE_MB,
      avItems: median(ts.map((s) => s.avItems)),
      avRcu: median(ts.map((s) => s.avRcu)),
      avMs: median(ts.map((s) => s.avMs)),
      avP95: percentile(ts.map((s) => s.avMs), 95),
      turnMs: median(ts.map((s) => s.ms)),
      turnP95: percentile(ts.map((s) => s.ms), 95),
      roundTrips: median(ts.map((s) => s.roundTrips)),
      turnRcu: median(ts.map((s) => s.readCapacity)),
      turnWcu: median(ts.map((s) => s.pricedWcu)),
      naiveRcu: median(ns.map((s) => s.rcu)),
      naiveScanned: median(ns.map((s) => s.scanned)),
      naivePages: median(ns.map((s) => s.pages)),
      awsPages: Math.max(1, Math.ceil(fx.partitionBytes / ONE_MB)),
      naiveMs: median(ns.map((s) => s.ms)),
      naiveP95: percentile(ns.map((s) => s.ms), 95),
      naiveRuns: ns.length,
      turnRuns: ts.length,
      // Paired with the 0-archived run of the same round, so machine-load drift cancels out.
      turnVsBase: median(ts.map((s, i) => s.ms / baseTurns[i]!.ms)),
      avVsBase: median(ts.map((s, i) => s.avMs / baseTurns[i]!.avMs)),
      controlMs: median(control.get(fx.size)!),
      controlVsBase: median(control.get(fx.size)!.map((c, i) => c / baseControl[i]!)),
    };
  });
  const base = rows[0]!;
  const last = rows[rows.length - 1]!;
  const at10k = rows.find((r) => r.size === 10_000) ?? last;

  const within = (ratio: number) => Math.abs(ratio - 1) <= 0.05;
  const second = rows[1] ?? last;
  const targets: Target[] = [
    {
      name: `activeView items read, ${fmt(base.size)} -> ${fmt(last.size)} archived`,
      target: "flat (within 5%)",
      measured: `${fmt(base.avItems)} -> ${fmt(last.avItems)} (${delta(last.avItems / base.avItems - 1)})`,
      met: within(last.avItems / base.avItems),
    },
    {
      name: `activeView RCU, ${fmt(base.size)} -> ${fmt(last.size)} archived`,
      target: "flat (within 5%)",
      measured:
        `${fmt(base.avRcu, 1)} -> ${fmt(last.avRcu, 1)} (${delta(last.avRcu / base.avRcu - 1)}); ` +
        `${fmt(second.size)} -> ${fmt(last.size)}: ${delta(last.avRcu / second.avRcu - 1)}`,
      met: within(last.avRcu / base.avRcu),
    },
    {
      name: `activeView Query latency, ${fmt(base.size)} -> ${fmt(last.size)} archived`,
      target: "flat (within 5%)",
      measured: `${ms(base.avMs)} -> ${ms(last.avMs)}; paired median ratio ${times(last.avVsBase, 2)}`,
      met: within(last.avVsBase),
    },
    {
      name: `turn latency, ${fmt(base.size)} -> ${fmt(last.size)} archived`,
      target: "flat (within 5%)",
      measured: `${ms(base.turnMs)} -> ${ms(last.turnMs)}; paired median ratio ${times(last.turnVsBase, 2)}`,
      met: within(last.turnVsBase),
    },
    {
      name: `RCU naive / activeView at ${fmt(at10k.size)} archived`,
      target: ">= 20x",
      measured: times(at10k.naiveRcu / at10k.avRcu),
      met: at10k.naiveRcu / at10k.avRcu >= 20,
    },
  ];

  return {
    id: "hot-path",
    title: "Per-turn hot path (DynamoDB Local)",
    command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only hot-path`,
    tables: [
      {
        title: `Real runTurn without compaction: active set = META + 1 summary + ${ACTIVE_MESSAGES} messages; median of ${runs} runs`,
        columns: ["archived", "items in partition", "activeView items", "activeView RCU", "turn round trips", "turn RCU", "turn WCU (priced)", "activeView median / p95", "activeView vs 0 archived", "turn median / p95", "turn vs 0 archived", "control: 1-item Query", "control vs 0 archived"],
        rows: rows.map((r) => [
          fmt(r.size),
          fmt(r.partitionItems),
          fmt(r.avItems),
          fmt(r.avRcu, 1),
          fmt(r.roundTrips),
          fmt(r.turnRcu, 1),
          fmt(r.turnWcu),
          `${ms(r.avMs)} / ${ms(r.avP95)}`,
          times(r.avVsBase, 2),
          `${ms(r.turnMs)} / ${ms(r.turnP95)}`,
          times(r.turnVsBase, 2),
          ms(r.controlMs),
          times(r.controlVsBase, 2),
        ]),
      },
      {
        title: "Naive read of the same replay: Query(pk) over the whole partition + FilterExpression, strongly consistent",
        columns: ["archived", "partition MB", "items read", "RCU", "pages (Local)", "pages on AWS (1 MB)", "median / p95", "runs", "RCU naive / activeView", "latency naive / activeView"],
        rows: rows.map((r) => [
          fmt(r.size),
          fmt(r.partitionMB, 2),
          fmt(r.naiveScanned),
          fmt(r.naiveRcu, 1),
          fmt(r.naivePages),
          fmt(r.awsPages),
          `${ms(r.naiveMs)} / ${ms(r.naiveP95)}`,
          fmt(r.naiveRuns),
          times(r.naiveRcu / r.avRcu),
          times(r.naiveMs / r.avMs),
        ]),
      },
      ...(bigFold
        ? [
            {
              title: "The active summary's sourceRefs in the replay read (same active set, 1,000 archived)",
              columns: ["newest fold", "sourceRefs on the active summary", "activeView items", "activeView RCU", "vs fold of 100"],
              rows: [
                ["100 messages", "100", fmt(rows.find((r) => r.size === 1_000)!.avItems), fmt(rows.find((r) => r.size === 1_000)!.avRcu, 1), "1.00x"],
                [
                  "1,000 messages",
                  "1,000",
                  fmt(median(bigFoldViews.map((v) => v.items))),
                  fmt(median(bigFoldViews.map((v) => v.rcu)), 1),
                  times(median(bigFoldViews.map((v) => v.rcu)) / rows.find((r) => r.size === 1_000)!.avRcu, 2),
                ],
              ],
            },
          ]
        : []),
    ],
    targets,
    notes: [
      `RCU and items are what DynamoDB Local reports (ReturnConsumedCapacity) for the activeView Query (ActiveView.consumedCapacity / itemsRead) and for the naive Query; the turn's writes are priced with AWS's rules from item sizes (transactional x2, LSI entry included) because DynamoDB Local under-reports TransactWriteItems.`,
      `Messages are synthetic (USER ~${USER_CHARS} chars, ASSISTANT ~${ASSISTANT_CHARS} chars); archived history is seeded with BatchWriteItem from the store's own item builders as folds of ${FOLD} messages, each with its superseded summary. After every measured turn the probe message is deleted (outside the timing) so each run sees the identical active set.`,
      "The control is a Query for META alone (1 item, base table) on the same partition. DynamoDB Local's Query time grows with the size of the partition even when it returns one item (its storage is SQLite); GetItem does not. On DynamoDB a Query's cost and latency follow the data it reads, which is what the RCU columns show.",
      "'vs 0 archived' is the median over rounds of the ratio to the 0-archived run of the same round (the sizes run interleaved, in rotating order), so load from other processes on the machine cancels out.",
      "The active summary at 0 archived folded nothing, so it carries no sourceRefs; at every other size it is the summary of the last fold of 100 messages and carries 100 ids (~3 KB). The replay index does not project sourceRefs, so they cost the turn nothing.",
      "DynamoDB Local returns the whole partition in one page; DynamoDB stops a page at 1 MB read, so the naive read would need the 'pages on AWS' round trips in series.",
    ],
    data: { sizes, runs, rows, bigFoldViews },
  };
}
