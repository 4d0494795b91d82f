/**
 * Property tests of the compaction commit protocol against the real DynamoDB Local engine: for a
 * random sequence of appends, compactions in every mode, range compactions, races, faults at any
 * step (before or after the write, with or without a crash of the container), summarizer failures,
 * lease expiry and roll-forwards, every invariant holds after every step; and once the leases
 * expired, one call settles the process and a forced compaction is never blocked.
 *
 * Each case runs on a fresh process (and fresh containers), so cases never see each other.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { draftMessages, writeMessages } from "../support/seed.js";
import { silentLog } from "../../core/adapters/log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import type { Role } from "../../core/domain/model.js";
import type { MessageInput as AppendMessageBody } from "../../core/domain/fields.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import type { Clock } from "../../core/ports/clock.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { composeContext } from "../../core/services/context.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { createDeps } from "../../core/composition/create-deps.js";
import {
  ack,
  ackedIds,
  anchorViolations,
  emptyLedger,
  ledgerViolations,
  memoryRuleViolations,
  toolGroupViolations,
  type AppendLedger,
} from "../../tools/chaos/checks.js";
import { NONCE_TAG, type SummarizerOutcome } from "../../tools/chaos/plan.js";
import { createChaosSummarizer } from "../../tools/chaos/summarizer.js";
import { freshTable } from "../support/dynamo.js";
import { createFaultyStore, InjectedFault, type Fault } from "../../tools/faulty-store.js";
import { findViolations, readAll } from "../../tools/invariants.js";

const LEASE_MS = 150;
const TENANT = "prop";
const WINDOW = 100_000;
let store: Store;
let client: DynamoDBDocumentClient;
let tableName: string;
let cases = 0;

beforeAll(async () => {
  ({ store, client, tableName } = await freshTable("prop"));
});

// ---- commands -------------------------------------------------------------------------------

const FAULTABLE = ["acquireLease", "putMemory", "commitCompaction", "finishPendingArchive", "releaseLease"] as const;
type Step = (typeof FAULTABLE)[number] | "appendMessage";
interface FaultSpec {
  method: Step;
  when: "before" | "after";
  crash: boolean;
  /** A roll-forward that dies half way (some messages archived, the marker still set). */
  half: boolean;
}
type Mode = "SOFT" | "HARD" | "EMERGENCY";

type Command =
  | { t: "append"; messages: Array<{ role: Role; strength: string | null; trivial: boolean }>; idem: boolean; fault: FaultSpec | null }
  | { t: "toolGroup"; results: number }
  | { t: "bulk"; n: number }
  | { t: "compact"; mode: Mode | { ratio: number }; fault: FaultSpec | null; summarizer: SummarizerOutcome }
  | { t: "range"; from: number; to: number; fault: FaultSpec | null; summarizer: SummarizerOutcome }
  | { t: "race"; modes: [Mode, Mode] }
  | { t: "rollForward"; via: "turn" | "context" | "quiet" }
  | { t: "retryAppend" }
  | { t: "expire" };

const faultArb = (methods: readonly Step[]): fc.Arbitrary<FaultSpec | null> =>
  fc.option(
    fc
      .record({ method: fc.constantFrom(...methods), when: fc.constantFrom("before" as const, "after" as const), crash: fc.boolean(), half: fc.boolean() })
      // A write that applied and was never acknowledged is a crash (or a lost answer: the same thing here).
      .map((f) => ({ ...f, crash: f.crash || f.when === "after", half: f.half && f.method === "finishPendingArchive" && f.when === "before" })),
    { freq: 2 },
  );
const summarizerArb = fc.constantFrom<SummarizerOutcome>("ok", "ok", "ok", "error", "throw", "empty");
const modeArb = fc.constantFrom<Mode>("SOFT", "HARD", "EMERGENCY");

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant("append" as const),
      messages: fc.array(
        fc.record({
          role: fc.constantFrom<Role>("USER", "ASSISTANT", "ASSISTANT", "SYSTEM"),
          strength: fc.constantFrom(null, null, "weak", "normal", "strong", "pinned"),
          trivial: fc.boolean(),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      idem: fc.boolean(),
      fault: faultArb(["appendMessage"]),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("toolGroup" as const), results: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("bulk" as const), n: fc.integer({ min: 100, max: 106 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant("compact" as const),
      mode: fc.oneof(modeArb, fc.record({ ratio: fc.double({ min: 0, max: 1.5, noNaN: true }) })),
      fault: faultArb(FAULTABLE),
      summarizer: summarizerArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ t: fc.constant("range" as const), a: fc.double({ min: 0, max: 1, noNaN: true }), b: fc.double({ min: 0, max: 1, noNaN: true }), fault: faultArb(FAULTABLE), summarizer: summarizerArb })
      .map(({ a, b, ...r }) => ({ ...r, from: Math.min(a, b), to: Math.max(a, b) })),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("race" as const), modes: fc.tuple(modeArb, modeArb) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("rollForward" as const), via: fc.constantFrom("turn" as const, "context" as const, "quiet" as const) }) },
  { weight: 1, arbitrary: fc.constant({ t: "retryAppend" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "expire" as const }) },
);

// ---- one case ---------------------------------------------------------------------------------

/**
 * Every container reads this clock: the wall clock plus the time the test moved it on, so a lease
 * expires (and a timeout or slow answer outlives it) when the test says, not after a wait.
 */
let skipped = 0;
const clock: Clock = { now: () => new Date(Date.now() + skipped) };
const passTime = (ms: number) => void (skipped += ms);

const container = (): ServiceDeps => ({
  ...createDeps({
    env: { COMPACTION_LEASE_MS: String(LEASE_MS) },
    store,
    metrics: createRecordingMetrics(),
    log: silentLog,
    events: { publish: async () => {} },
    summarizerFactory: async () => createChaosSummarizer({ steps: [], leaseMs: LEASE_MS }),
  }),
  clock,
});

/** A summarizer giving `outcome`; a timeout or a slow answer moves the clock past the lease while it runs. */
function summarizerFor(outcome: SummarizerOutcome): Summarizer {
  const chaos = createChaosSummarizer({ steps: [{ outcome, delayMs: 0 }], leaseMs: 0 });
  if (outcome !== "timeout" && outcome !== "slow") return chaos;
  return {
    ...chaos,
    summarize: (input) => {
      passTime(Math.round(LEASE_MS * 1.3));
      return chaos.summarize(input);
    },
  };
}

/** One case: a fresh process, its ledger of acknowledged appends, and the current container. */
function createCase() {
  const key: ProcessKey = { tenantId: TENANT, processId: `case-${++cases}-${Date.now().toString(36)}` };
  const ledger: AppendLedger = emptyLedger();
  const log: string[] = [];
  let deps: ServiceDeps = container();
  let nonce = 0;
  let lastIdem: { nonce: string; body: AppendMessageBody } | null = null;

  const check = (violations: string[]) => {
    if (violations.length > 0) throw new Error(`${violations.join("\n")}\nafter:\n${log.join("\n")}`);
  };

  /** Per-call deps: a store with the fault, a summarizer with the outcome; a crash replaces the container. */
  async function call<T>(fault: FaultSpec | null, outcome: SummarizerOutcome, fn: (d: ServiceDeps) => Promise<T>): Promise<T | InjectedFault> {
    const faulty = createFaultyStore(store);
    if (fault) faulty.inject(toFault(fault));
    const summarizer = summarizerFor(outcome);
    try {
      return await fn({ ...deps, store: faulty, summarizer: async () => summarizer });
    } catch (e) {
      if (!(e instanceof InjectedFault)) throw e;
      return e;
    } finally {
      if (faulty.dead) deps = container();
    }
  }

  const draft = (role: Role, content: string, tags: string[], idem: boolean) => {
    const n = `${key.processId}.${nonce++}`;
    const body: AppendMessageBody = { role, content, tags: [...tags, `${NONCE_TAG}${n}`], ...(idem ? { idempotencyKey: `k-${n}` } : {}) };
    return { nonce: n, body };
  };

  async function append(role: Role, content: string, tags: string[], idem: boolean, fault: FaultSpec | null = null) {
    const { nonce: n, body } = draft(role, content, tags, idem);
    ledger.sent.add(n);
    if (idem) lastIdem = { nonce: n, body };
    const out = await call(fault, "ok", (d) => appendMessage(d, key, body));
    if (!(out instanceof InjectedFault)) ack(ledger, n, out.message.id);
  }

  async function appendBody(n: string, body: AppendMessageBody) {
    ledger.sent.add(n);
    ack(ledger, n, (await appendMessage(deps, key, body)).message.id);
  }

  const request = (mode: Mode | { ratio: number }): CompactionRequest =>
    typeof mode === "string"
      ? { model: { contextWindow: WINDOW }, force: mode }
      : { model: { contextWindow: WINDOW }, prompt: { tokens: Math.round(mode.ratio * WINDOW) } };

  const racer = (d: ServiceDeps): ServiceDeps => ({
    ...d,
    summarizer: async () => createChaosSummarizer({ steps: [{ outcome: "ok", delayMs: 30 }], leaseMs: LEASE_MS }),
  });

  /** More messages than one transaction can archive, written straight to the table (25 per BatchWrite). */
  async function bulk(n: number) {
    const nonces = Array.from({ length: n }, () => `${key.processId}.${nonce++}`);
    const messages = draftMessages(key, n, (i) => ({
      role: i === n - 1 ? "USER" : "ASSISTANT",
      content: `imported row ${i}: checked`,
      tags: [`${NONCE_TAG}${nonces[i]}`],
    }));
    messages.forEach((m, i) => ack(ledger, nonces[i]!, m.id));
    await writeMessages(client, tableName, key, messages);
  }

  async function run(c: Command) {
    log.push(JSON.stringify(c));
    switch (c.t) {
      case "append":
        for (const [i, m] of c.messages.entries()) {
          const content = m.trivial ? "ok, thanks" : `Decision ${nonce}: keep the ${m.role.toLowerCase()} notes for the audit.`;
          await append(m.role, content, m.strength ? [`STRENGTH:${m.strength}`] : [], c.idem, i === 0 ? c.fault : null);
        }
        return;
      case "toolGroup": {
        const calls = Array.from({ length: c.results }, (_, k) => ({ id: `tc-${key.processId}-${nonce}-${k}`, name: "lookup", arguments: `{"k":${k}}` }));
        const head = draft("ASSISTANT", "Looking it up.", [], true);
        await appendBody(head.nonce, { ...head.body, toolCalls: calls });
        for (const tc of calls) {
          const r = draft("TOOL", `{"rows": 3, "id": "${tc.id}"}`, [], true);
          await appendBody(r.nonce, { ...r.body, toolCallId: tc.id });
        }
        return;
      }
      case "bulk":
        return bulk(c.n);
      case "compact": {
        const before = (await store.activeView(key))!;
        const out = await call(c.fault, c.summarizer, (d) => compactIfNeeded(d, key, request(c.mode)));
        if (out instanceof InjectedFault || !out.compacted || before.state.pendingArchive || out.mode === "NONE") return;
        const memory = (await store.getMemory(key, out.memoryId!))!;
        check(anchorViolations(key, before.messages, memory, out.mode, DEFAULT_TUNABLES));
        return;
      }
      case "range": {
        const all = (await readAll(store, key)).messages;
        const at = (f: number) => all[Math.floor(f * (all.length - 1))]!.createdAt;
        await call(c.fault, c.summarizer, (d) => compactRange(d, key, { from: at(c.from), to: at(c.to), topicLabel: "topic" }));
        return;
      }
      case "race": {
        const [a, b] = await Promise.all([
          compactIfNeeded(racer(deps), key, request(c.modes[0])),
          compactIfNeeded(racer(container()), key, request(c.modes[1])),
        ]);
        // Two simultaneous compactions both commit only one after the other: the later chains the earlier.
        if (a!.compacted && b!.compacted) {
          const later = a!.memoryId! > b!.memoryId! ? a! : b!;
          const memory = await store.getMemory(key, later.memoryId!);
          if (!memory?.metadata.supersededMemoryId) check(["two racing compactions both committed from the same version"]);
        }
        return;
      }
      case "rollForward":
        if (c.via === "turn") await runTurn(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 0 } });
        else if (c.via === "context") await composeContext(deps, key, await settledView(deps, key));
        else await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 0 } });
        return;
      case "retryAppend": {
        if (!lastIdem) return;
        ack(ledger, lastIdem.nonce, (await appendMessage(deps, key, lastIdem.body)).message.id);
        return;
      }
      case "expire":
        passTime(LEASE_MS + 20);
        return;
    }
  }

  async function invariants(settled: boolean) {
    const snapshot = await readAll(store, key);
    check([
      ...findViolations(snapshot, { appendedIds: ackedIds(ledger), settled }),
      ...ledgerViolations(snapshot, ledger),
      ...memoryRuleViolations(snapshot),
      ...toolGroupViolations(snapshot),
    ]);
    return snapshot;
  }

  return {
    key,
    run,
    append,
    check,
    invariants,
    deps: () => deps,
    /** A new container, as after a restart: new caches, new id factory. */
    restart: () => void (deps = container()),
  };
}

function toFault(f: FaultSpec): Fault {
  return {
    method: f.method,
    when: f.when,
    crash: f.crash,
    ...(f.half
      ? {
          beforeThrow: async (inner: Store, args: unknown[]) => {
            const [key, memoryId] = args as [ProcessKey, string];
            const memory = await inner.getMemory(key, memoryId);
            if (memory) await inner.markArchived(key, memory.sourceRefs.slice(98, 104), memoryId);
          },
        }
      : {}),
  };
}

describe("the commit protocol under random operations, faults and crashes", () => {
  it("keeps every invariant after every step, and recovers once the leases expire", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 3, maxLength: 14 }), async (commands) => {
        const c = createCase();
        await upsertProcess(c.deps(), TENANT, c.key.processId, { projectId: "proj" });
        await c.append("USER", "Original task: reconcile the invoices.", [], true);
        for (let i = 0; i < 12; i++) await c.append(i % 2 ? "USER" : "ASSISTANT", `note ${i}: invoice ${i} matched`, [], false);
        for (const command of commands) {
          await c.run(command);
          await c.invariants(false);
        }
        // Recovery: leases expire, one quiet turn in a new container rolls forward, nothing is left half done.
        passTime(LEASE_MS + 30);
        c.restart();
        await runTurn(c.deps(), c.key, { model: { contextWindow: WINDOW }, prompt: { tokens: 0 } });
        const settled = await c.invariants(true);
        const lease = settled.state!.lease;
        if (lease && Date.parse(lease.until) > clock.now().getTime()) c.check([`a live lease is left by ${lease.owner}`]);
        // Liveness: nothing that crashed blocks the next compaction.
        const forced = await compactIfNeeded(c.deps(), c.key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
        if (!forced.compacted && !["keep_recent", "nothing_eligible"].includes(forced.reason ?? "")) {
          c.check([`a forced compaction after recovery did not run: ${forced.reason}`]);
        }
        await c.invariants(true);
      }),
      {
        // PROPERTY_RUNS=200 for a longer hunt; PROPERTY_SEED=<seed> replays a reported failure.
        numRuns: Number(process.env.PROPERTY_RUNS ?? 20),
        ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED) } : {}),
        endOnFailure: true,
      },
    );
  }, 240_000);

  it("generates every kind of step, fault and crash", () => {
    const sample = fc.sample(fc.array(commandArb, { minLength: 3, maxLength: 14 }), { numRuns: 200, seed: 42 }).flat();
    const kinds = new Set(sample.map((c) => c.t));
    expect([...kinds].sort()).toEqual(["append", "bulk", "compact", "expire", "race", "range", "retryAppend", "rollForward", "toolGroup"]);
    const faults = sample.flatMap((c) => ("fault" in c && c.fault ? [c.fault] : []));
    for (const m of [...FAULTABLE, "appendMessage"]) {
      expect(faults.some((f) => f.method === m && f.when === "before")).toBe(true);
      expect(faults.some((f) => f.method === m && f.when === "after")).toBe(true);
    }
    expect(faults.some((f) => f.crash && f.when === "before")).toBe(true);
    expect(faults.some((f) => f.half)).toBe(true);
  });
});
