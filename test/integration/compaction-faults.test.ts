/**
 * Faults injected at every step of the compaction commit protocol (a Store wrapper that throws
 * before or after a call), against the real DynamoDB Local engine: the invariants hold right after
 * the fault, and the next call finishes the work (roll forward, lease expiry, retry).
 */
import { UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { archiveUpdate } from "../../core/adapters/dynamodb/message-params.js";
import { beforeAll, describe, expect, it } from "vitest";
import { seedImported } from "../support/seed.js";
import type { Message, Role } from "../../core/domain/model.js";
import type { EventPublisher } from "../../core/ports/events.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { composeContext } from "../../core/services/context.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { createFaultyStore, InjectedFault, type Fault } from "../../tools/faulty-store.js";
import { checkInvariants, readAllMessages } from "../../tools/invariants.js";
import { makeMemory, makeMessage } from "../support/fixtures.js";
import { testContainer } from "../support/container.js";

const TENANT = "faults";
/** Long enough never to expire by itself under load: the tests expire it by moving the clock. */
const LEASE_MS = 30_000;
const HARD: CompactionRequest = { model: { contextWindow: 100_000 }, force: "HARD" };
/** A request below every threshold: it only settles (rolls forward) and returns NONE. */
const QUIET: CompactionRequest = { model: { contextWindow: 100_000 }, prompt: { tokens: 10 } };
let store: Store;
let client: DynamoDBDocumentClient;
let tableName: string;
let seq = 0;

beforeAll(async () => {
  ({ store, client, tableName } = await freshTable("faults"));
});

/**
 * A process with a pinned original task and `n` more messages (the last one USER), and deps whose
 * store is a FaultyStore over the shared table. HARD then folds all but the pinned and the last 5.
 */
async function setup(n: number, options: { events?: EventPublisher } = {}) {
  const faulty = createFaultyStore(store);
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => void (offsetMs += ms) };
  const { deps, fake, log } = testContainer({ store: faulty, env: { COMPACTION_LEASE_MS: String(LEASE_MS) }, clock, events: options.events });
  const key = { tenantId: TENANT, processId: `fault-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  const original = (await appendMessage(deps, key, { role: "USER", content: "Import last year's invoices." })).message;
  let rest: Message[];
  if (n > 40) rest = await seedImported(client, tableName, key, n);
  else {
    rest = [];
    for (let i = 0; i < n; i++) {
      const role: Role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
      rest.push((await appendMessage(deps, key, { role, content: `note ${i}: invoice batch ${i} checked.` })).message);
    }
  }
  const all = [original, ...rest];
  return {
    faulty,
    fake,
    clock,
    log,
    deps,
    key,
    appended: all.map((m) => m.id),
    /** What stays active once the fold is done: the pinned original and HARD's anchor of 5. */
    finalActive: [original.id, ...rest.slice(-5).map((m) => m.id)],
  };
}

type Leaves = "nothing" | "failed_row" | "committed";
interface Case {
  name: string;
  faults: Fault[];
  /** The summarizer answers ok:false on the first call. */
  summarizerFails?: boolean;
  /** More messages than one transaction can archive. */
  big?: boolean;
  leaves: Leaves;
  leaseHeld?: boolean;
  pending?: boolean;
  /** What the recovering call is (every entry point settles a pending archive first). */
  next?: "compaction" | "turn" | "context";
}

const half = (inner: Store, args: unknown[]) => {
  const [key, memoryId] = args as [ProcessKey, string];
  return inner.getMemory(key, memoryId).then(async (m) => {
    await inner.markArchived(key, m!.sourceRefs.slice(98, 110), memoryId);
  });
};

const cases: Case[] = [
  { name: "before acquireLease", faults: [{ method: "acquireLease", when: "before" }], leaves: "nothing" },
  { name: "after acquireLease (a crash holding the lease)", faults: [{ method: "acquireLease", when: "after" }], leaves: "nothing", leaseHeld: true },
  { name: "before putMemory of a FAILED row", summarizerFails: true, faults: [{ method: "putMemory", when: "before" }], leaves: "nothing" },
  { name: "after putMemory of a FAILED row", summarizerFails: true, faults: [{ method: "putMemory", when: "after" }], leaves: "failed_row" },
  { name: "before releaseLease after a failed summary", summarizerFails: true, faults: [{ method: "releaseLease", when: "before" }], leaves: "failed_row", leaseHeld: true },
  { name: "before commitCompaction", faults: [{ method: "commitCompaction", when: "before" }], leaves: "nothing" },
  {
    name: "before commitCompaction and releaseLease (a crash after summarizing)",
    faults: [
      { method: "commitCompaction", when: "before" },
      { method: "releaseLease", when: "before" },
    ],
    leaves: "nothing",
    leaseHeld: true,
  },
  { name: "after commitCompaction applied", faults: [{ method: "commitCompaction", when: "after" }], leaves: "committed" },
  { name: "before the read after the commit", faults: [{ method: "activeView", when: "before", nth: 2 }], leaves: "committed" },
  {
    name: "after commitCompaction applied with a pending archive",
    big: true,
    faults: [{ method: "commitCompaction", when: "after" }],
    leaves: "committed",
    pending: true,
  },
  {
    name: "before finishPendingArchive (rolled forward by the next turn)",
    big: true,
    faults: [{ method: "finishPendingArchive", when: "before" }],
    leaves: "committed",
    pending: true,
    next: "turn",
  },
  {
    name: "in the middle of finishPendingArchive (some archived; rolled forward by a context read)",
    big: true,
    faults: [{ method: "finishPendingArchive", when: "before", beforeThrow: half }],
    leaves: "committed",
    pending: true,
    next: "context",
  },
  {
    name: "after finishPendingArchive",
    big: true,
    faults: [{ method: "finishPendingArchive", when: "after" }],
    leaves: "committed",
  },
];

describe("a fault at each step of the commit protocol", () => {
  it.each(cases)("$name: invariants hold, and the next call finishes the work", async (c) => {
    const ctx = await setup(c.big ? 130 : 20);
    const { faulty, fake, deps, key } = ctx;
    if (c.summarizerFails) fake.script.push({ ok: false, failure: { kind: "summarizer_error", retryable: false, message: "provider overloaded" } });
    for (const f of c.faults) faulty.inject(f);

    const first = await compactIfNeeded(deps, key, HARD).catch((e: unknown) => e);
    expect(faulty.fired).toHaveLength(c.faults.length);
    if (first instanceof Error) expect(first).toBeInstanceOf(InjectedFault);
    else expect(first).toMatchObject({ compacted: c.leaves === "committed" });

    // Right after the fault: what it left behind, and every invariant.
    const memories = await store.listMemories(key);
    const expected = { nothing: [], failed_row: ["FAILED"], committed: ["OK"] }[c.leaves];
    expect(memories.map((m) => m.status)).toEqual(expected);
    const state = (await store.getProcess(key))!;
    expect(state.lease !== null).toBe(c.leaseHeld ?? false);
    expect(state.pendingArchive !== null).toBe(c.pending ?? false);
    expect(await checkInvariants(store, key, { appendedIds: ctx.appended, settled: !c.pending, noLease: !c.leaseHeld })).toEqual([]);

    faulty.clear();
    const callsBefore = fake.calls.length;
    if (c.leaseHeld) {
      // The lease blocks the next call without paying for a summary, until it expires.
      expect(await compactIfNeeded(deps, key, HARD)).toMatchObject({ compacted: false, reason: "compaction_in_progress" });
      expect(fake.calls).toHaveLength(callsBefore);
      ctx.clock.advance(LEASE_MS + 1);
    }
    if (c.next === "turn") await runTurn(deps, key, QUIET);
    else if (c.next === "context") await composeContext(deps, key, await settledView(deps, key));
    const second = await compactIfNeeded(deps, key, HARD);
    expect(second.compacted).toBe(c.leaves !== "committed");
    if (c.leaves === "committed") expect(fake.calls).toHaveLength(callsBefore); // nothing was summarized twice

    // Finished: one active summary, the fold complete, no pending archive, no lease.
    const after = await store.listMemories(key);
    expect(after.filter((m) => m.status === "OK")).toHaveLength(1);
    expect(ids((await store.activeView(key))!.messages)).toEqual(ctx.finalActive);
    expect(await checkInvariants(store, key, { appendedIds: ctx.appended, settled: true, noLease: true })).toEqual([]);
  });

  it("a roll-forward left pending is finished by a call that compacts nothing", async () => {
    const ctx = await setup(130);
    ctx.faulty.inject({ method: "commitCompaction", when: "after" });
    await expect(compactIfNeeded(ctx.deps, ctx.key, HARD)).rejects.toBeInstanceOf(InjectedFault);
    const archivedInCommit = (await readAllMessages(store, ctx.key)).filter((m) => m.archivedInMemoryId !== null);
    expect(archivedInCommit).toHaveLength(98); // memory + META + 98 archives = 100 items in the transaction

    const quiet = await compactIfNeeded(ctx.deps, ctx.key, QUIET);
    expect(quiet).toMatchObject({ mode: "NONE", compacted: false });
    expect((await store.getProcess(ctx.key))!.pendingArchive).toBeNull();
    expect(ids((await store.activeView(ctx.key))!.messages)).toEqual(ctx.finalActive);
    expect(await checkInvariants(store, ctx.key, { appendedIds: ctx.appended, settled: true, noLease: true })).toEqual([]);
  });

  it("an event bus that fails never undoes a committed compaction", async () => {
    const events: EventPublisher = {
      publish: async () => {
        throw new Error("bus down");
      },
    };
    const ctx = await setup(20, { events });
    const result = await compactIfNeeded(ctx.deps, ctx.key, HARD);
    expect(result.compacted).toBe(true);
    expect(ctx.log.entries.filter((e) => e.level === "ERROR").map((e) => e.message)).toEqual(["event publish failed"]);
    expect(await checkInvariants(store, ctx.key, { appendedIds: ctx.appended, settled: true, noLease: true })).toEqual([]);
  });
});

describe("the invariant checker", () => {
  it("reports a corrupted process: two active summaries, a pinned message archived into a missing memory, a lost message", async () => {
    const key = { tenantId: TENANT, processId: `corrupt-${++seq}` };
    await store.upsertProcess(TENANT, { processId: key.processId, projectId: "proj" }, new Date().toISOString());
    const pinned = makeMessage(key.processId, { tags: ["STRENGTH:pinned"] });
    const plain = makeMessage(key.processId);
    for (const m of [pinned, plain]) await store.appendMessage(key, m);
    await store.putMemory(key, makeMemory(key.processId, { sourceRefs: [plain.id] }));
    await store.putMemory(key, makeMemory(key.processId));
    // Written past the store port, which refuses to archive into a memory that is not OK.
    await client.send(new UpdateCommand(archiveUpdate(tableName, key, pinned.id, "mem_missing", new Date().toISOString())));

    const violations = await checkInvariants(store, key, { appendedIds: [pinned.id, plain.id, "msg_vanished"] });
    const expectations = [
      /2 active summaries/,
      new RegExp(`pinned message ${pinned.id} was archived`),
      new RegExp(`${pinned.id} is archived into missing memory mem_missing`),
      /META.activeSummaryId is null/,
      /msg_vanished was appended but is gone/,
    ];
    for (const e of expectations) expect(violations.some((v) => e.test(v)), `${e} in ${violations.join("\n")}`).toBe(true);
    // Settled: the memory that folded `plain` never archived it.
    expect((await checkInvariants(store, key, { settled: true })).some((v) => v.includes(`folded ${plain.id}, which is still active`))).toBe(true);
  });
});

const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);
