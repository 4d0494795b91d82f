/**
 * An export is one snapshot (docs/api.md, "Export and import"), against DynamoDB Local: it finishes
 * a pending roll-forward before it starts, and a fold, an undo or a pin between its pages is a 409
 * rather than a file that would lose messages or fold them twice once imported.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import { createLocalBus } from "../../core/adapters/events/local-bus.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { AppError } from "../../core/domain/errors.js";
import type { Role } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { exportPage, type ExportCursor } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { findViolations, readAll } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { createMemoryLog } from "../support/memory-log.js";

const TENANT = "snap";
const WINDOW = 10_000;
const PAGED = { pageBytes: 1, readMessages: 5 };
let table: Awaited<ReturnType<typeof freshTable>>;
/** Ten items per transaction: a revert of about twenty originals leaves a restore roll-forward. */
let small: Store;
let deps: ServiceDeps;

const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });

function depsOver(store: Store): ServiceDeps {
  const fake = createFakeSummarizer();
  return createDeps({ env: {}, store, events: createLocalBus(undefined, { retryDelaysMs: [] }), metrics: createRecordingMetrics(), log: createMemoryLog(), summarizerFactory: async () => fake });
}

/** A container that dies right after its revert's transaction: the restore's roll-forward never runs. */
function crashingAfterTransaction(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "finishPendingArchive") return async () => { throw new Error("container crashed after its transaction"); };
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function seed(k: ProcessKey, n: number, from = 0) {
  await upsertProcess(deps, TENANT, k.processId, { projectId: "p" });
  for (let i = from; i < from + n; i++) {
    const role: Role = i % 2 === 0 ? "USER" : "ASSISTANT";
    await appendMessage(deps, k, { role, content: `step ${i}: crate ${i} goes to dock ${i % 4} on day ${i % 6}.` });
  }
}

async function fold(k: ProcessKey) {
  const out = await compactManually(deps, k, { model: { contextWindow: WINDOW }, force: "HARD" });
  expect(out.result.compacted).toBe(true);
  return out.result.memoryId!;
}

async function exportAll(k: ProcessKey, between?: (page: number) => Promise<void>) {
  let text = "";
  let cursor: ExportCursor | undefined;
  let page = 0;
  do {
    const out = await exportPage(deps, k, cursor, PAGED);
    text += out.text;
    cursor = out.next;
    if (cursor && between) await between(++page);
  } while (cursor);
  return text;
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => (e instanceof AppError ? { kind: e.kind, code: e.code } : e),
  );

beforeAll(async () => {
  table = await freshTable("snap");
  small = createDynamoStore({ client: table.client, tableName: table.tableName, transactionLimit: 10 });
  deps = depsOver(small);
});

it("finishes a crashed revert's restore before it starts: the copy replays every message the source does", async () => {
  const src = key("crashed-revert");
  await seed(src, 30);
  const f = await fold(src);
  await expect(revertMemory(depsOver(crashingAfterTransaction(small)), src, f)).rejects.toThrow(/crashed/);
  expect((await small.getProcess(src))!.pendingArchive).toBe(f);
  const text = (await exportPage(deps, src)).text;
  const copy = key("crashed-revert-copy");
  await importProcess(deps, copy, text, { remapIds: false });
  expect(findViolations(await readAll(small, copy), { settled: true })).toEqual([]);
  const [a, b] = [await settledView(deps, src), await settledView(deps, copy)];
  expect(b.messages.map((m) => m.id)).toEqual(a.messages.map((m) => m.id));
  expect(b.messages).toHaveLength(30);
});

describe("a change between pages is a 409, and the next export from the first page is whole", () => {
  const changes: Array<[string, (k: ProcessKey) => Promise<unknown>]> = [
    ["a fold", (k) => fold(k)],
    ["an undo", async (k) => revertMemory(deps, k, (await small.getProcess(k))!.activeSummaryId!)],
    ["a pin", async (k) => setMessageStrength(deps, k, (await settledView(deps, k)).messages.at(-1)!.id, "pinned")],
  ];
  for (const [name, change] of changes) {
    it(name, async () => {
      const src = key(`moved-${name.replace(/[^a-z]+/g, "-")}`);
      await seed(src, 24);
      await fold(src);
      await seed(src, 16, 24);
      let changed = false;
      const moved = refusal(
        exportAll(src, async (page) => {
          if (page !== 2) return;
          await change(src);
          changed = true;
        }),
      );
      expect(await moved).toEqual({ kind: "conflict", code: "export.changed" });
      expect(changed).toBe(true);
      const copy = key(`${src.processId}-copy`);
      await importProcess(deps, copy, await exportAll(src), { remapIds: false });
      expect(findViolations(await readAll(small, copy), { settled: true })).toEqual([]);
    });
  }
});
