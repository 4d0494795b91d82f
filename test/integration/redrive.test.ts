/**
 * A compaction request that failed every delivery and was redriven from the dead-letter queue is
 * handled once (docs/operations.md, "Redrive"), against DynamoDB Local: the local bus parks the
 * event in a queue stand-in in the shape Lambda's failure destination writes, the redrive hands it
 * back to the worker, and a second redrive or a duplicate delivery changes nothing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { redriveDeadLetters } from "../../core/adapters/events/dead-letters.js";
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import { createLocalBus, type BusEvent } from "../../core/adapters/events/local-bus.js";
import { EVENTS } from "../../core/domain/events.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import type { WorkerOutcome } from "../../core/services/compaction/worker.js";
import { freshTable } from "../support/dynamo.js";
import { createMemoryDeadLetterQueue } from "../support/memory-dead-letter-queue.js";
import { createMemoryLog } from "../support/memory-log.js";
import { testContainer } from "../support/container.js";

const WORKER = "arn:aws:lambda:eu-west-1:123456789012:function:team-a-vancetope-memory-Events-CompactionWorker:$LATEST";
let store: Store;

beforeAll(async () => {
  ({ store } = await freshTable("redrive"));
});

/** The worker behind the local bus, whose failed events land in the queue stand-in as Lambda's onFailure records. */
function harness() {
  const dlq = createMemoryDeadLetterQueue();
  const bus = createLocalBus(createMemoryLog(), {
    // Lambda's two retries of an asynchronous invocation, without the wait.
    retryDelaysMs: [0, 0],
    deadLetter: (event, error) =>
      dlq.push({
        version: "1.0",
        requestContext: { requestId: "r1", functionArn: WORKER, condition: "RetriesExhausted", approximateInvokeCount: 3 },
        requestPayload: { source: event.source, "detail-type": event.detailType, detail: event.detail },
        responseContext: { statusCode: 200, functionError: "Unhandled" },
        responsePayload: { errorType: "Error", errorMessage: String((error as Error).message) },
      }),
  });
  const { deps, fake } = testContainer({ store, env: { COMPACTION_LEASE_WAIT_MS: "0" }, events: bus });
  const attempts: Array<WorkerOutcome | "threw"> = [];
  const subscribe = () =>
    bus.subscribe(EVENTS.CompactionRequested, async (e) => {
      try {
        attempts.push(await handleCompactionRequested(deps, e.detail));
      } catch (error) {
        attempts.push("threw");
        throw error;
      }
    });
  // What `npm run ops -- redrive` does with Lambda, done with the bus: the record's payload back to the worker.
  const redeliver = async (_target: string, payload: unknown) => {
    const p = payload as { source: string; "detail-type": string; detail: Record<string, unknown> };
    await bus.deliver({ source: p.source, detailType: p["detail-type"], detail: p.detail });
  };
  return { dlq, bus, fake, deps, attempts, subscribe, redeliver };
}

async function queuedFold(h: ReturnType<typeof harness>): Promise<{ key: ProcessKey; request: BusEvent }> {
  const key = { tenantId: "rd", processId: `rd-${Math.random().toString(36).slice(2, 8)}` };
  await upsertProcess(h.deps, key.tenantId, key.processId, { projectId: "proj" });
  for (let i = 0; i < 30; i++) {
    await appendMessage(h.deps, key, { role: i % 2 ? "ASSISTANT" : "USER", content: `step ${i}: shelf ${i} goes to aisle ${i % 7}.` });
  }
  const turn = await runTurn(h.deps, key, { message: { role: "USER", content: "Which aisle first?" }, model: { contextWindow: 10_000 }, prompt: { tokens: 7_200 } });
  expect(turn.compaction.reason).toBe("compaction_queued");
  const request = h.bus.published().find((e) => e.detailType === EVENTS.CompactionRequested.detailType)!;
  return { key, request };
}

const folds = async (key: ProcessKey) => (await store.listMemories(key)).map((m) => ({ id: m.id, status: m.status }));

describe("a redriven compaction request", () => {
  it("fails into the queue while another holder keeps the lease, then is handled once after the redrive", async () => {
    const h = harness();
    const { key, request } = await queuedFold(h);
    const [queued] = await folds(key);
    expect(queued).toMatchObject({ status: "QUEUED" });

    // Another holder keeps the lease: each of the three deliveries throws, and the event is parked.
    const state = (await store.getProcess(key))!;
    const now = new Date();
    const lease = { owner: "other", now: now.toISOString(), until: new Date(now.getTime() + 600_000).toISOString(), expectedVersion: state.version };
    expect(await store.acquireLease(key, lease)).toEqual({ ok: true });
    h.subscribe();
    await h.bus.deliver(request);
    await h.bus.drain();
    expect(h.attempts).toEqual(["threw", "threw", "threw"]);
    expect(h.dlq.held()).toHaveLength(1);
    expect(await folds(key)).toEqual([queued]);
    expect(h.fake.calls).toHaveLength(0);

    // The holder is gone; the operator redrives.
    await store.releaseLease(key, "other");
    const lines: string[] = [];
    const first = await redriveDeadLetters({ queue: h.dlq, redeliver: h.redeliver, max: 100, report: (l) => lines.push(l) });
    await h.bus.drain();
    expect(first).toEqual({ moved: 1, kept: 0 });
    expect(lines).toEqual([expect.stringMatching(/^redriven CompactionRequested -> .*CompactionWorker.*is being compacted/)]);
    expect(h.dlq.held()).toEqual([]);
    expect(h.attempts.slice(3)).toEqual([{ done: "prepared", foldId: queued!.id }]);
    expect(await folds(key)).toEqual([{ id: queued!.id, status: "PREPARED" }]);
    expect(h.fake.calls).toHaveLength(1);

    // A second redrive finds nothing; the same request delivered again is skipped: still one fold, one summary.
    expect(await redriveDeadLetters({ queue: h.dlq, redeliver: h.redeliver, max: 100 })).toEqual({ moved: 0, kept: 0 });
    await h.bus.deliver(request);
    await h.bus.drain();
    expect(h.attempts).toHaveLength(5);
    expect(h.attempts[4]).toMatchObject({ skipped: expect.any(String), foldId: queued!.id });
    expect(await folds(key)).toEqual([{ id: queued!.id, status: "PREPARED" }]);
    expect(h.fake.calls).toHaveLength(1);
    expect(h.dlq.held()).toEqual([]);
  });

  it("redriven twice in a row (the same message copied), is still folded once", async () => {
    const h = harness();
    const { key, request } = await queuedFold(h);
    const record = { requestContext: { functionArn: WORKER }, requestPayload: { source: request.source, "detail-type": request.detailType, detail: request.detail } };
    h.dlq.push(record);
    h.dlq.push(record);
    h.subscribe();
    expect(await redriveDeadLetters({ queue: h.dlq, redeliver: h.redeliver, max: 100 })).toEqual({ moved: 2, kept: 0 });
    await h.bus.drain();
    expect(h.fake.calls).toHaveLength(1);
    expect((await folds(key)).map((f) => f.status)).toEqual(["PREPARED"]);
    expect(h.attempts.filter((a) => a !== "threw" && "done" in a)).toHaveLength(1);
  });
});
