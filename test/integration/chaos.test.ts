/**
 * The chaos harness (tools/chaos/) as part of `npm test`: a short seeded run against the
 * run's DynamoDB Local with faults injected must end with zero violations; the plan is repeatable
 * from its seed; the CLI prints the documented last line; a store that breaks the protocol on
 * purpose is caught (the harness is not vacuous); and what the harness found stays fixed. The long
 * run is `npm run chaos` (docs/reliability.md).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { silentLog } from "../../core/adapters/log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import type { DomainEvent } from "../../core/ports/events.js";
import { importingStore, type ImportingStore, type Store } from "../../core/ports/store.js";
import { setStoredNative, storedNative } from "../../core/domain/model.js";
import type { StoredNative } from "../../core/domain/native/blob-parts.js";
import { EVENTS } from "../../core/domain/events.js";
import { answerInboxItem } from "../../core/services/inbox.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { createChaosSummarizer } from "../../tools/chaos/summarizer.js";
import { formatReport, runChaos } from "../../tools/chaos/harness.js";
import { FAULT_METHODS, planChaos, SUMMARIZER_OUTCOMES } from "../../tools/chaos/plan.js";
import { dynamoEndpoint, freshTable } from "../support/dynamo.js";
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { META_SK, processPk } from "../../core/adapters/dynamodb/keys.js";
import { archiveUpdate, restoreUpdate } from "../../core/adapters/dynamodb/message-params.js";
import { handlePlanCompleted, handleInboxAnswered, handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import { steppingClock } from "../support/stepping-clock.js";

const LAST_LINE = /^chaos: seed (\d+), (\d+) operations, (\d+) faults, (\d+) violations$/;

describe("the chaos plan", () => {
  it("is fixed by the seed: same seed, same operations and faults; another seed, another plan", () => {
    const a = planChaos({ seed: 11, turns: 400 });
    const b = planChaos({ seed: 11, turns: 400 });
    expect(b).toEqual(a);
    expect(planChaos({ seed: 12, turns: 400 }).digest).not.toBe(a.digest);
    expect(a.engines.reduce((n, e) => n + e.ops.length, 0)).toBe(400);
  });

  it("plans faults at every step of the commit protocol and every summarizer failure", () => {
    const plan = planChaos({ seed: 11, turns: 2000 });
    const ops = plan.engines.flatMap((e) => e.ops);
    const faults = [...ops.map((o) => o.fault), ...ops.flatMap((o) => (o.spec.kind === "burst" ? o.spec.members.map((m) => m.fault) : []))];
    for (const method of FAULT_METHODS) {
      for (const when of method === "markArchived" ? ["before"] : ["before", "after"]) {
        expect(faults.some((f) => f?.method === method && f.when === when), `${method} ${when}`).toBe(true);
      }
    }
    expect(faults.some((f) => f?.crash)).toBe(true);
    const outcomes = new Set(ops.flatMap((o) => o.summarizer.map((s) => s.outcome)));
    for (const outcome of SUMMARIZER_OUTCOMES) expect(outcomes.has(outcome), outcome).toBe(true);
    const kinds = new Set(ops.map((o) => o.spec.kind));
    for (const kind of ["append", "group", "turn", "compact", "range", "plan", "context", "burst", "flood", "replayArchive", "restart"]) {
      expect(kinds.has(kind as never), kind).toBe(true);
    }
  });

  it("plans stalls by default: held store calls (inside a roll-forward too), late summaries and answers, detached ones; none with stalls off", () => {
    const ops = planChaos({ seed: 11, turns: 2000 }).engines.flatMap((e) => e.ops);
    const stalls = [...ops.map((o) => o.stall), ...ops.flatMap((o) => (o.spec.kind === "burst" ? o.spec.members.map((m) => m.stall) : []))];
    expect(stalls.some((s) => s?.on === "store" && s.method === "finishPendingArchive" && s.at === "inside" && s.detach)).toBe(true);
    for (const at of ["before", "after"]) expect(stalls.some((s) => s?.on === "store" && s.at === at), at).toBe(true);
    expect(stalls.some((s) => s?.on === "summarizer")).toBe(true);
    expect(stalls.some((s) => s && !s.detach)).toBe(true);
    expect(ops.some((o) => (o.lateBy ?? 0) > 0)).toBe(true);
    // A stalled roll-forward after a flood is overtaken by a revert of its fold.
    expect(ops.some((o, i) => o.stall?.on === "store" && o.stall.method === "finishPendingArchive" && o.spec.kind === "context" && ops[i + 1]?.spec.kind === "revert")).toBe(true);

    const off = planChaos({ seed: 11, turns: 2000, stalls: false });
    expect(JSON.stringify(off)).not.toMatch(/"stall|"lateBy/);
    expect(off.engines.reduce((n, e) => n + e.ops.length, 0)).toBe(2000);
  });
});

describe("a short seeded chaos run", () => {
  it("injects faults, crashes containers and ends with zero violations", async () => {
    const report = await runChaos({ seed: 20261129, turns: 160, engines: 4, endpoint: dynamoEndpoint() });
    const lines = formatReport(report);
    expect(report.violations, lines.join("\n")).toEqual([]);
    // Pins, unpins and undos ran among the faults (their invariants are part of the violations above).
    // Every planned PATCH either changed the strength or was refused because the message was archived.
    const pins = planChaos({ seed: 20261129, turns: 160, engines: 4 }).engines.flatMap((e) => e.ops).filter((op) => op.spec.kind === "pin").length;
    expect(pins).toBeGreaterThan(0);
    expect(report.controls.pinned + report.controls.unpinned + report.controls.refusedArchived, lines.join("\n")).toBe(pins);
    expect(report.controls.reverted, lines.join("\n")).toBeGreaterThan(0);
    expect(lines.at(-1)).toBe(`chaos: seed 20261129, ${report.operations} operations, ${report.faults} faults, 0 violations`);

    const kinds = Object.keys(report.faultsByKind);
    expect(report.faults).toBeGreaterThanOrEqual(15);
    expect(kinds.some((k) => k.startsWith("store:"))).toBe(true);
    expect(kinds.some((k) => k.startsWith("summarizer:"))).toBe(true);
    expect(report.crashes).toBeGreaterThan(0);
    expect(report.retries).toBeGreaterThan(0);
    expect(report.compactions.committed).toBeGreaterThan(0);
    // Engines append native content (thinking, reasoning, tool calls, a large part as a blob); it reads back exactly.
    expect(report.native.messages, lines.join("\n")).toBeGreaterThan(0);
    expect(report.native.blobs, lines.join("\n")).toBeGreaterThan(0);
    expect(report.operations).toBeGreaterThan(160);
    // Calls were held, some while the engine went on, one of them a roll-forward between its reads
    // and its writes (overtaken by a revert, tools/chaos/README.md "Stalls").
    expect(report.stalls.held, lines.join("\n")).toBeGreaterThan(5);
    expect(report.stalls.detached, lines.join("\n")).toBeGreaterThan(0);
    expect(report.faultsByKind["stall:finishPendingArchive:inside"] ?? 0, lines.join("\n")).toBeGreaterThan(0);
  }, 300_000); // about 30 s alone; the two shared cores of a full run can multiply it by five

  it("with the background worker: crashes around the prepared summary, duplicate and late deliveries, stale folds, zero violations", async () => {
    const report = await runChaos({ seed: 11, turns: 120, engines: 2, endpoint: dynamoEndpoint(), execution: "background" });
    const lines = formatReport(report);
    expect(report.violations, lines.join("\n")).toEqual([]);
    const kinds = report.faultsByKind;
    // The worker ran, crashed before and after storing a prepared summary, and saw duplicates.
    expect(report.worker.prepared ?? 0, lines.join("\n")).toBeGreaterThan(0);
    expect(kinds["store:storeFold:before"] ?? 0).toBeGreaterThan(0);
    expect(kinds["store:storeFold:after"] ?? 0).toBeGreaterThan(0);
    expect(report.worker.skipped ?? 0).toBeGreaterThan(0);
    // Turns committed prepared folds without a model call, and stale ones were discarded.
    expect(report.compactions.preparedUsed).toBeGreaterThan(0);
    expect(report.compactions.folds.DISCARDED ?? 0).toBeGreaterThan(0);
    // Accepted offers were folded by the worker, among those prepared folds and manual compactions.
    expect(report.offers.rangeCompacted, lines.join("\n")).toBeGreaterThan(0);
  }, 150_000);

  it("npm run chaos prints the documented last line and exits 0", async () => {
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", fileURLToPath(new URL("../../scripts/chaos.ts", import.meta.url)), "--seed", "5", "--turns", "16", "--engines", "2", "--endpoint", dynamoEndpoint(), "--quiet"],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" } },
      );
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.on("error", reject);
      child.on("exit", (c) => resolve({ code: c, stdout: out }));
    });
    const last = stdout.trimEnd().split("\n").at(-1)!;
    expect(last, stdout).toMatch(LAST_LINE);
    expect(LAST_LINE.exec(last)![4]).toBe("0");
    expect(code).toBe(0);
  }, 60_000);
});

/**
 * The roll-forward as it was before its writes were conditional (docs/compaction.md, "The commit
 * protocol"): it reads META and the memory, then archives (or restores) the rest one message at a
 * time, guarded by nothing but the message's own state, and clears the marker.
 */
function unguardedRollForward(store: Store, { client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): Store {
  return {
    ...store,
    async finishPendingArchive(key, memoryId) {
      const metaKey = { pk: processPk(key), sk: META_SK };
      const [meta, memory] = await Promise.all([client.send(new GetCommand({ TableName: tableName, Key: metaKey, ConsistentRead: true })), store.getMemory(key, memoryId)]);
      const marker = meta.Item?.pendingArchive as string | undefined;
      if (!marker?.endsWith(memoryId) || !memory) return { archived: 0, missing: [] };
      const at = new Date().toISOString();
      let archived = 0;
      for (const id of memory.sourceRefs.slice((meta.Item?.pendingArchiveFrom as number | undefined) ?? 0)) {
        const update = memory.status === "REVERTED" ? restoreUpdate(tableName, key, id, memoryId) : archiveUpdate(tableName, key, id, memoryId, at);
        await client.send(new UpdateCommand(update)).then(
          () => archived++,
          () => undefined,
        );
      }
      const clear = { TableName: tableName, Key: metaKey, UpdateExpression: "REMOVE pendingArchive, pendingArchiveFrom", ConditionExpression: "pendingArchive = :m", ExpressionAttributeValues: { ":m": marker } };
      await client.send(new UpdateCommand(clear)).catch(() => undefined);
      return { archived, missing: [] };
    },
  };
}

describe("the harness catches a broken store", () => {
  it("reports duplicated appends and folds that were never archived", async () => {
    // Idempotency keys ignored, and commits that archive nothing: both must show as violations.
    const broken = (store: Store): Store => ({
      ...store,
      appendMessage: (key, message) => store.appendMessage(key, message),
      commitCompaction: (key, commit) => store.commitCompaction(key, { ...commit, archiveIds: [] }),
    });
    const report = await runChaos({ seed: 3, turns: 40, engines: 2, endpoint: dynamoEndpoint(), wrapStore: broken });
    const text = report.violations.join("\n");
    expect(text).toMatch(/is stored \d+ times|acknowledged under \d+ different ids/);
    expect(text).toMatch(/folded msg_\w+, which is still active/);
    expect(formatReport(report).at(-1)).toMatch(new RegExp(`, ${report.violations.length} violations$`));
  }, 60_000);

  it("reports native content that no longer reads back as its engine sent it", async () => {
    // The second native message is stored with other content under its own hash, the third with
    // the first one's native content: each must show as a violation.
    let seen = 0;
    let first: StoredNative | undefined;
    const broken = (store: Store): Store => ({
      ...store,
      appendMessage: (key, message, idem) => {
        const stored = storedNative(message);
        if (!stored) return store.appendMessage(key, message, idem);
        seen++;
        first ??= stored;
        const swapped = seen === 2 ? { ...stored, content: [...stored.content, { type: "text", text: "added" }] } : seen === 3 ? first : stored;
        return store.appendMessage(key, setStoredNative({ ...message }, swapped), idem);
      },
    });
    const report = await runChaos({ seed: 3, turns: 40, engines: 2, endpoint: dynamoEndpoint(), wrapStore: broken });
    const text = report.violations.join("\n");
    expect(seen).toBeGreaterThan(3);
    expect(text).toMatch(/its native content reads back with hash [0-9a-f]{64}, the item keeps/);
    expect(text).toMatch(/keeps native content of hash [0-9a-f]{64}, its engine sent/);
  }, 60_000);

  it("reports a provider fold's memory that lost the blob of its block", async () => {
    // Commits that drop the memory's nativeBlob: the row still says it keeps its block, the blob
    // is named by nothing and the end-of-run sweep deletes it.
    let dropped = 0;
    const broken = (store: Store): Store => ({
      ...store,
      commitCompaction: (key, commit) => {
        if (!commit.memory.nativeBlob) return store.commitCompaction(key, commit);
        dropped++;
        const { nativeBlob: _dropped, ...memory } = commit.memory;
        return store.commitCompaction(key, { ...commit, memory });
      },
    });
    const report = await runChaos({ seed: 3, turns: 60, engines: 2, endpoint: dynamoEndpoint(), wrapStore: broken });
    expect(dropped).toBeGreaterThan(0);
    expect(report.violations.join("\n")).toMatch(/memory \w+ \((OK|REVERTED)\) says it keeps its block and has none/);
    expect(report.native.blocks).toBeGreaterThan(0); // the inline blocks still read back
  }, 60_000);

  it("reports what a stalled, unguarded roll-forward archives into a fold a revert undid meanwhile", async () => {
    // Seed 20 plans a flood, then its fold's roll-forward stalls after its reads while a revert
    // undoes the fold (tools/chaos/README.md, "Stalls").
    const report = await runChaos({ seed: 20, turns: 40, engines: 2, endpoint: dynamoEndpoint(), wrapStore: unguardedRollForward });
    expect(report.faultsByKind["stall:finishPendingArchive:inside"] ?? 0).toBeGreaterThan(0);
    expect(report.violations.join("\n")).toMatch(/is archived into REVERTED memory/);
  }, 90_000);

  it("reports a copy that lacks a message and an erasure that leaves a hidden import behind", async () => {
    // A store whose import drops the first message of each batch, and whose listing of unlisted
    // processes (imports not yet live, deletions that stopped) is always empty.
    const broken = (plain: Store): Store => {
      const store = importingStore(plain);
      const wrapped: ImportingStore = {
        ...store,
        putImportedItems: (key, token, items) => store.putImportedItems(key, token, { ...items, messages: items.messages.slice(1) }),
        listUnlistedProcesses: async () => ({ items: [] }),
      };
      return wrapped;
    };
    // Seed 6 checks two copies (seed 3's exports, since provider folds joined, were refused as changed).
    const report = await runChaos({ seed: 6, turns: 60, engines: 2, endpoint: dynamoEndpoint(), wrapStore: broken });
    const text = report.violations.join("\n");
    expect(report.lifecycle.copies).toBeGreaterThan(0);
    expect(text).toMatch(/copy chaos-\S+ of chaos-\S+ \(imported\): .*(is not in the copy|does not exist)/);
    expect(text).toMatch(/chaos-b: erased, yet item T#chaos-b#P#\S+-hidden/);
  }, 240_000);

  it("reports an accepted offer folded again when its answer comes back after an undo", async () => {
    // A store that forgets each offer's recorded range job: every delivery of the answer queues a
    // new one. Seed 8 undoes an offer's range summary, then delivers its answer again.
    const forgetful = (store: Store): Store => ({
      ...store,
      getInboxItem: async (tenantId, itemId) => {
        const item = await store.getInboxItem(tenantId, itemId);
        return item && { ...item, rangeJobId: undefined };
      },
      claimRangeJob: async (_tenantId, _itemId, jobId) => ({ ok: true, jobId }),
    });
    const report = await runChaos({ seed: 8, turns: 40, engines: 2, endpoint: dynamoEndpoint(), wrapStore: forgetful });
    expect(report.faultsByKind["stall:late-redelivery"] ?? 0).toBeGreaterThan(0);
    expect(report.violations.join("\n")).toMatch(/accepted offer \S+ was range-compacted 2 times/);
  }, 60_000);

  it("reports an accepted offer whose range job is discarded as expired while no clock jump held its request", async () => {
    // A store that reads every queued range job as past its life: the worker discards it as
    // expired at once (the stored row keeps its full life), and the answer delivered again after
    // an undo finds it so. Only a request held across a jump past that life excuses an expiry.
    const expiring = (store: Store): Store => ({
      ...store,
      getMemory: async (key, memoryId) => {
        const m = await store.getMemory(key, memoryId);
        return m?.status === "QUEUED" && m.metadata.job === "range" ? { ...m, metadata: { ...m.metadata, expiresAt: m.metadata.queuedAt } } : m;
      },
    });
    const report = await runChaos({ seed: 8, turns: 40, engines: 2, endpoint: dynamoEndpoint(), wrapStore: expiring });
    expect(report.offers.expiredHeld).toBe(0);
    expect(report.violations.join("\n")).toMatch(/accepted offer \S+: its event was acknowledged without a range compaction \(expired\)/);
  }, 60_000);
});

describe("regressions the harness found", () => {
  it("an accepted offer whose range compaction backs off fails the delivery (to be redelivered) instead of being lost", async () => {
    const { store } = await freshTable("regress");
    const published: DomainEvent[] = [];
    const deps = createDeps({
      env: { COMPACTION_LEASE_MS: "200", COMPACTION_LEASE_WAIT_MS: "0" },
      store,
      events: { publish: async (e) => void published.push(e) },
      metrics: createRecordingMetrics(),
      log: silentLog,
      summarizerFactory: async () => createChaosSummarizer({ steps: [], leaseMs: 200 }),
    });
    // Every reading a distinct millisecond: the plan's range boundaries are unambiguous without waiting.
    const clock = steppingClock();
    deps.clock = clock;
    const key = { tenantId: "regress", processId: "offer-1" };
    await upsertProcess(deps, key.tenantId, key.processId, { projectId: "p" });
    const say = async (role: "USER" | "ASSISTANT", content: string, tags?: string[]) => {
      await appendMessage(deps, key, { role, content, ...(tags ? { tags } : {}) });
    };
    for (let i = 0; i < 3; i++) {
      await say("USER", `question ${i} about invoices`);
      await say("ASSISTANT", `answer ${i} about invoices`);
    }
    await say("USER", "Let's plan the export.", ["MODE:plan"]);
    await say("ASSISTANT", "Step 1: dump the table.");
    await say("USER", "Step 2: verify the dump.");
    const completedAt = clock.now().toISOString();
    await say("USER", "What about the import?"); // the triggering turn, after the range: never folded
    const { item } = await handlePlanCompleted(deps, { tenantId: key.tenantId, processId: key.processId, planId: "p1", topicLabel: "export", completedAt });
    await answerInboxItem(deps, key.tenantId, item!.id, true);

    const detail = { tenantId: key.tenantId, itemId: item!.id, accepted: true };
    // The answer's handler queues the range job for the worker and answers at once.
    const queued = await handleInboxAnswered(deps, detail);
    expect(queued).toMatchObject({ compactedMessages: 0, reason: "compaction_queued" });
    const requested = published.filter((e) => e.detailType === EVENTS.CompactionRequested.detailType).map((e) => e.detail);
    expect(requested).toEqual([expect.objectContaining({ foldId: queued!.memoryId, job: "range" })]);

    // Another compaction holds the lease (long enough that no machine is slow enough to outlast it).
    const state = (await store.getProcess(key))!;
    const now = new Date();
    expect(await store.acquireLease(key, { owner: "other", now: now.toISOString(), until: new Date(now.getTime() + 60_000).toISOString(), expectedVersion: state.version })).toEqual({ ok: true });
    await expect(handleCompactionRequested(deps, requested[0])).rejects.toMatchObject({ code: "compaction.retry_later" });

    // The redelivery, once the other holder let go, folds the range.
    await store.releaseLease(key, "other");
    const result = await handleCompactionRequested(deps, requested[0]);
    expect(result).toMatchObject({ compactedMessages: 3 });
    // A duplicate delivery afterwards is acknowledged: the offer's job is done.
    expect(await handleInboxAnswered(deps, detail)).toMatchObject({ compactedMessages: 0, reason: "already_folded" });
    expect(await handleCompactionRequested(deps, requested[0])).toMatchObject({ skipped: "fold is OK" });
  });
});
