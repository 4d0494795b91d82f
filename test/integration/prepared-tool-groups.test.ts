/**
 * A prepared fold that took a tool call whose result had not arrived is not committed once the
 * result is there (docs/compaction.md, "Never an orphan"), against DynamoDB Local: the commit
 * would archive the call and leave its result alone in the replay.
 */
import { beforeAll, expect, it } from "vitest";
import { createLocalBus } from "../../core/adapters/events/local-bus.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../../core/composition/create-deps.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactForTurn } from "../../core/services/compaction/turn-compaction.js";
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { findViolations, readAll } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { createMemoryLog } from "../support/memory-log.js";

let table: Awaited<ReturnType<typeof freshTable>>;
let deps: ServiceDeps;

beforeAll(async () => {
  table = await freshTable("orphan");
  const fake = createFakeSummarizer();
  const base = createDeps({ env: {}, store: table.store, events: createLocalBus(undefined, { retryDelaysMs: [] }), metrics: createRecordingMetrics(), log: createMemoryLog(), summarizerFactory: async () => fake });
  deps = { ...base, compaction: { ...base.compaction, execution: "background" } };
});

it("a prepared fold holding a call whose result arrived since is discarded as stale, not committed apart from it", async () => {
  const k: ProcessKey = { tenantId: "orphan", processId: "orphan-1" };
  await upsertProcess(deps, k.tenantId, k.processId, { projectId: "p-orphan" });
  await appendMessage(deps, k, { role: "USER", content: "Audit the three services and report the slowest endpoint." });
  for (let i = 0; i < 6; i++) await appendMessage(deps, k, { role: i % 2 ? "USER" : "ASSISTANT", content: `context ${i}: service ${i} has ${i + 3} endpoints to profile today.` });
  const call = (await appendMessage(deps, k, { role: "ASSISTANT", content: "", toolCalls: [{ id: "c-slow", name: "profile", arguments: '{"service":"billing"}' }] })).message;
  for (let i = 0; i < 6; i++) await appendMessage(deps, k, { role: "ASSISTANT", content: "", toolCalls: [{ id: `c${i}`, name: "ping", arguments: `{"n":${i}}` }] });
  for (let i = 0; i < 6; i++) await appendMessage(deps, k, { role: "TOOL", toolCallId: `c${i}`, content: `pong ${i}: 12 ms` });
  const req = (ratio: number) => ({ model: { contextWindow: 10_000 }, prompt: { tokens: ratio * 10_000 } });
  const queued = await compactForTurn(deps, k, req(0.8));
  expect(await runQueuedFold(deps, { ...k, foldId: queued.memoryId!, mode: "HARD", job: "prepare" })).toMatchObject({ done: "prepared" });
  expect((await deps.store.getMemory(k, queued.memoryId!))!.sourceRefs).toContain(call.id);
  const result = (await appendMessage(deps, k, { role: "TOOL", toolCallId: "c-slow", content: "billing: /invoices p99 2.4 s" })).message;
  await compactForTurn(deps, k, req(0.97));
  const [callNow, resultNow] = [await deps.store.getMessage(k, call.id), await deps.store.getMessage(k, result.id)];
  // Together: both archived (a fresh fold took the whole group) or both active.
  expect(callNow!.archivedInMemoryId === null).toBe(resultNow!.archivedInMemoryId === null);
  expect((await deps.store.getMemory(k, queued.memoryId!))!).toMatchObject({ status: "DISCARDED", metadata: { discardReason: "stale: a tool call it covers has a result it does not" } });
  expect(findViolations(await readAll(table.store, k), { settled: true })).toEqual([]);
});
