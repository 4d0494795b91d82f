/**
 * Jobs that a caller was told are on their way (a 202 manual compaction, an accepted offer's range
 * job) live as long as the worker's asynchronous queue and its dead-letter queue may hold their
 * request (docs/compaction.md, "A fold's states"), against DynamoDB Local with an injected clock:
 * a request delivered hours late still folds, and a turn never drops a manual job as lost.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { handleCompactionRequested, handleInboxAnswered } from "../../core/adapters/events/handlers.js";
import type { Message } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import type { RangeResult } from "../../core/services/compaction/range-compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { OFFER_TAG } from "../../core/services/recompaction-offers.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { checkInvariants } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";
import { freshTable } from "../support/dynamo.js";

const TENANT = "age";
const WINDOW = 10_000;
const HOUR = 3_600_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("age"));
});

/** A container whose clock the test moves; the worker is not subscribed (the test delivers its requests late). */
function container() {
  let offset = 0;
  const c = testContainer({ store, clock: { now: () => new Date(Date.now() + offset) } });
  return { ...c, later: (ms: number) => void (offset += ms) };
}

async function seeded(deps: ServiceDeps, n: number): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `age-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  const messages: Message[] = [];
  for (let i = 0; i < n; i++) {
    const role = i % 2 ? "ASSISTANT" : "USER";
    messages.push((await appendMessage(deps, key, { role, content: `step ${i}: crate ${i} goes to dock ${i % 4}.` })).message);
  }
  return { key, messages };
}

const statusOf = async (key: ProcessKey, id: string) => (await store.getMemory(key, id))?.status;

describe("a queued job delivered late", () => {
  it("an accepted offer's range job delivered 5 hours after it was queued still folds its range", async () => {
    const { deps, later, requestFor } = container();
    const { key, messages } = await seeded(deps, 20);
    const inboxItemId = `inb_late_${seq}`;
    const at = new Date().toISOString();
    const payload = { from: messages[3]!.createdAt, to: messages[9]!.createdAt, topicLabel: "docks" };
    await store.putInboxItem(TENANT, { id: inboxItemId, processId: key.processId, type: "APPROVAL", tags: [OFFER_TAG], status: "OPEN", payload, createdAt: at });
    expect(await store.answerInboxItem(TENANT, inboxItemId, "ACCEPTED", at)).toMatchObject({ ok: true });
    const queued = (await handleInboxAnswered(deps, { tenantId: TENANT, itemId: inboxItemId, accepted: true })) as RangeResult;
    expect(queued).toMatchObject({ reason: "compaction_queued" });

    // The worker is throttled: its asynchronous queue delivers the request 5 hours later.
    later(5 * HOUR);
    const outcome = await handleCompactionRequested(deps, requestFor(queued.memoryId!));
    expect(outcome).toMatchObject({ done: "committed" });
    expect(await statusOf(key, queued.memoryId!)).toBe("OK");
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a manual compaction answered 202 is kept by turns past the queue timeout and folds when its request arrives 5 hours later", async () => {
    const { deps, fake, later, requestFor } = container();
    const { key } = await seeded(deps, 20);
    // The in-request fold's summarizer never answers, so the request answers 202 and its lease
    // stays until it expires.
    fake.script.push(() => new Promise(() => {}));
    const manualDeps = { ...deps, compaction: { ...deps.compaction, manualBudgetMs: 50 } };
    const out = await compactManually(manualDeps, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(out.status).toBe(202);
    const jobId = out.result.memoryId!;

    // Turns come after the queue timeout (10 minutes): the manual job is not given up as lost.
    later(20 * 60_000);
    await runTurn(deps, key, { message: { role: "USER", content: "Any news on the docks?" }, model: { contextWindow: WINDOW }, prompt: { tokens: 100 } });
    expect(await statusOf(key, jobId)).toBe("QUEUED");

    later(5 * HOUR);
    const outcome = await handleCompactionRequested(deps, requestFor(jobId));
    expect(outcome).toMatchObject({ done: "committed" });
    expect(await statusOf(key, jobId)).toBe("OK");
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});
