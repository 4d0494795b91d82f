/**
 * One turn starts from one assessment (docs/architecture.md, "One turn's path"): it resolves
 * the model window once and loads the tunables once, whether it queues a fold, commits a prepared
 * one, or folds inline; a manual compaction that runs out of its budget loads them once as well.
 * Against DynamoDB Local, with the tunables loader and the window resolver wrapped to count calls.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import * as windows from "../../core/domain/model-windows.js";
import type { Role } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

vi.mock("../../core/domain/model-windows.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../core/domain/model-windows.js")>();
  return { ...original, resolveModelWindow: vi.fn(original.resolveModelWindow) };
});

const TENANT = "ts";
const WINDOW = 10_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  store = (await freshTable("ts")).store;
});

/** Deps whose tunables loader counts its calls. */
function counted(env: Record<string, string> = {}) {
  const { deps, requestFor } = testContainer({ store, env, retryDelaysMs: [] });
  const loader = deps.tunables;
  const loads = { count: 0 };
  deps.tunables = {
    ...loader,
    forProcess: (tenantId, projectId) => {
      loads.count++;
      return loader.forProcess(tenantId, projectId);
    },
  };
  return { deps, loads, requestFor };
}

async function seeded(deps: ServiceDeps, n: number): Promise<ProcessKey> {
  const key = { tenantId: TENANT, processId: `ts-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  for (let i = 0; i < n; i++) {
    const role: Role = i % 2 === 0 ? "USER" : "ASSISTANT";
    await appendMessage(deps, key, { role, content: `step ${i}: shelf ${i} goes to aisle ${i % 7} on day ${i % 5}.` });
  }
  return key;
}

const turn = (tokens: number) => ({
  message: { role: "USER" as const, content: "Which aisle holds shelf 3?" },
  query: "shelf 3 aisle",
  model: { name: "gpt-4o", contextWindow: WINDOW },
  prompt: { tokens },
});

/** Runs `work` and answers how many times it loaded the tunables and resolved the window. */
async function calls(loads: { count: number }, work: () => Promise<unknown>) {
  const resolve = vi.mocked(windows.resolveModelWindow);
  loads.count = 0;
  resolve.mockClear();
  await work();
  return { tunables: loads.count, windows: resolve.mock.calls.length };
}

describe("one turn resolves the window and loads the tunables once", () => {
  it("a background turn that queues a fold, then an EMERGENCY one that commits the prepared fold itself", async () => {
    const { deps, loads, requestFor } = counted();
    const key = await seeded(deps, 30);
    let queued = "";
    expect(await calls(loads, async () => (queued = (await runTurn(deps, key, turn(8_700))).compaction.memoryId!))).toEqual({ tunables: 1, windows: 1 });
    expect(queued).not.toBe("");
    expect(await handleCompactionRequested(deps, requestFor(queued))).toMatchObject({ done: "prepared" });
    let compacted = false;
    expect(await calls(loads, async () => (compacted = (await runTurn(deps, key, turn(9_600))).compaction.compacted))).toEqual({ tunables: 1, windows: 1 });
    expect(compacted).toBe(true);
  });

  it("an inline turn that folds", async () => {
    const { deps, loads } = counted({ COMPACTION_EXECUTION: "inline" });
    const key = await seeded(deps, 30);
    let compacted = false;
    expect(await calls(loads, async () => (compacted = (await runTurn(deps, key, turn(8_700))).compaction.compacted))).toEqual({ tunables: 1, windows: 1 });
    expect(compacted).toBe(true);
  });

  it("a manual compaction that runs out of its budget and queues the fold", async () => {
    const { deps, loads } = counted({ COMPACTION_MANUAL_BUDGET_MS: "50" });
    const key = await seeded(deps, 30);
    const stuck: Store = Object.create(store);
    stuck.acquireLease = () => new Promise(() => {});
    let status = 0;
    const work = async () => (status = (await compactManually({ ...deps, store: stuck }, key, { model: { contextWindow: WINDOW }, force: "HARD" })).status);
    expect(await calls(loads, work)).toEqual({ tunables: 1, windows: 1 });
    expect(status).toBe(202);
  });
});
