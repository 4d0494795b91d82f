/**
 * An import is one step seen from outside (docs/api.md, "Export and import"), against DynamoDB
 * Local: hidden (404, not listed, not foldable) until its last item is written, a crashed import
 * stays hidden and a DELETE erases it, a file no settled process could give is refused with
 * nothing written, queued and prepared folds come DISCARDED, and a tenant's imports have a rate.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ImportingStore, ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { compactForTurn } from "../../core/services/compaction/turn-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { exportPage } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { listProcesses, requireProcess, upsertProcess } from "../../core/services/processes.js";
import { findViolations, readAll } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";
import { freshTable } from "../support/dynamo.js";
import { refusal } from "../support/refusal.js";
import { appendSteps, foldHard } from "../support/steps.js";

const TENANT = "imp1";
const WINDOW = 10_000;
let table: Awaited<ReturnType<typeof freshTable>>;
let store: ImportingStore;
let deps: ServiceDeps;
/** An export of a process with two folds, the first superseded by the second. */
let twoFolds: string;

const key = (processId: string, tenantId = TENANT): ProcessKey => ({ tenantId, processId });

function depsOver(s: ImportingStore, extra: Partial<ServiceDeps> = {}): ServiceDeps {
  return { ...testContainer({ store: s, retryDelaysMs: [] }).deps, importsPerMinute: 1_000, ...extra };
}

const partition = (k: ProcessKey) => table.partition(k);

const lines = (text: string) => text.trim().split("\n");
const fileOf = (ls: string[]) => `${ls.join("\n")}\n`;

/** A store whose `putImportedItems` runs `between` after the first of its calls has written. */
function pausingAfterFirstBatch(between: () => Promise<void>): ImportingStore {
  let first = true;
  return {
    ...store,
    async putImportedItems(k, token, items) {
      const out = await store.putImportedItems(k, token, items);
      if (first) {
        first = false;
        await between();
      }
      return out;
    },
  };
}

beforeAll(async () => {
  table = await freshTable("imp1");
  store = table.store as ImportingStore;
  deps = depsOver(store);
  const src = key("src");
  await upsertProcess(deps, TENANT, src.processId, { projectId: "p" });
  await appendSteps(deps, src, 24);
  await foldHard(deps, src, WINDOW);
  await appendSteps(deps, src, 16, 24);
  await foldHard(deps, src, WINDOW);
  await appendSteps(deps, src, 4, 40);
  twoFolds = (await exportPage(deps, src)).text;
}, 60_000);

describe("an import is hidden until its last item is written", () => {
  it("while it writes, the new id is a 404, not listed, and a fold of it is a 404; afterwards the copy holds every invariant", async () => {
    const copy = key("copy-raced");
    const seen: unknown[] = [];
    const held = pausingAfterFirstBatch(async () => {
      seen.push(await refusal(requireProcess(deps, copy)));
      seen.push((await listProcesses(deps, TENANT, { limit: 100 })).items.some((p) => p.processId === copy.processId));
      seen.push(await refusal(compactManually(deps, copy, { model: { contextWindow: WINDOW }, force: "HARD" })));
      seen.push(await refusal(compactForTurn(deps, copy, { model: { contextWindow: WINDOW }, prompt: { tokens: 9_900 } })));
      seen.push(await refusal(appendMessage(deps, copy, { role: "USER", content: "a turn on a half-written process" })));
      seen.push(await refusal(upsertProcess(deps, TENANT, copy.processId, { projectId: "p" })));
    });
    await importProcess(depsOver(held), copy, twoFolds, { remapIds: false });
    const notFound = { kind: "not_found", code: "process.not_found" };
    expect(seen).toEqual([notFound, false, notFound, notFound, notFound, { kind: "conflict", code: "process.importing" }]);
    expect(findViolations(await readAll(store, copy), { settled: true })).toEqual([]);
    expect((await listProcesses(deps, TENANT, { limit: 100 })).items.some((p) => p.processId === copy.processId)).toBe(true);
    expect((await requireProcess(deps, copy)).activeSummaryId).toBe((await requireProcess(deps, key("src"))).activeSummaryId);
  });

  it("an import that stops half way stays hidden, and a DELETE erases what it wrote", async () => {
    const copy = key("copy-crashed");
    const crashing = pausingAfterFirstBatch(async () => {
      throw new Error("container stopped");
    });
    await expect(importProcess(depsOver(crashing), copy, twoFolds, { remapIds: false })).rejects.toThrow(/container stopped/);
    expect((await partition(copy)).length).toBeGreaterThan(1);
    expect(await refusal(requireProcess(deps, copy))).toEqual({ kind: "not_found", code: "process.not_found" });
    expect((await listProcesses(deps, TENANT, { limit: 100 })).items.some((p) => p.processId === copy.processId)).toBe(false);
    expect(await refusal(importProcess(deps, copy, twoFolds, { remapIds: false }))).toEqual({ kind: "conflict", code: "process.exists" });
    expect(await deleteProcess(deps, copy)).toEqual({ status: "deleted" });
    expect((await partition(copy)).map((i) => i.sk)).toEqual(["META"]);
  });

  it("a process deleted before the import's last update stays deleted: the import is a 404", async () => {
    const copy = key("copy-deleted");
    const racing = pausingAfterFirstBatch(async () => {
      expect(await deleteProcess(deps, copy)).toEqual({ status: "deleted" });
    });
    expect(await refusal(importProcess(depsOver(racing), copy, twoFolds, { remapIds: false }))).toEqual({ kind: "not_found", code: "process.not_found" });
    expect((await partition(copy)).map((i) => i.sk)).toEqual(["META"]);
  });
});

describe("the file as a whole is checked against the stored-data invariants before anything is written", () => {
  const edit = (text: string, change: (v: { kind?: string; message?: Record<string, unknown>; memory?: Record<string, unknown> }) => void) =>
    fileOf(
      lines(text).map((l) => {
        const v = JSON.parse(l);
        change(v);
        return JSON.stringify(v);
      }),
    );

  const cases: Array<[string, () => string]> = [
    [
      "two heads (the superseded summary marked not superseded)",
      () =>
        edit(twoFolds, (v) => {
          if (v.kind === "memory" && v.memory!.supersededAt !== null) {
            v.memory!.supersededAt = null;
            delete v.memory!.supersededByMemoryId;
          }
        }),
    ],
    [
      "originals archived into a REVERTED memory (a revert half rolled forward)",
      () =>
        edit(twoFolds, (v) => {
          if (v.kind === "memory" && v.memory!.supersededAt !== null) v.memory!.status = "REVERTED";
        }),
    ],
    [
      "originals an OK memory folded, exported active (a fold between pages)",
      () =>
        edit(twoFolds, (v) => {
          if (v.kind === "message" && v.message!.archivedInMemoryId !== null) v.message!.archivedInMemoryId = null;
        }),
    ],
    [
      "a process that names another active summary than the memories",
      () =>
        edit(twoFolds, (v) => {
          if (v.kind === "process") (v as { activeSummaryId: string | null }).activeSummaryId = null;
        }),
    ],
  ];
  for (const [name, file] of cases) {
    it(name, async () => {
      const copy = key(`bad-${name.replace(/[^a-z]+/g, "-").slice(0, 40)}`);
      expect(await refusal(importProcess(deps, copy, file(), { remapIds: true }))).toEqual({ kind: "input", code: "import.inconsistent" });
      expect(await partition(copy)).toEqual([]);
    });
  }
});

it("a queued or prepared fold of the file is imported DISCARDED: nothing in the copy would run it", async () => {
  const src = key("src-queued");
  const bg: ServiceDeps = { ...deps, compaction: { ...deps.compaction, execution: "background" } };
  await upsertProcess(bg, TENANT, src.processId, { projectId: "p" });
  await appendSteps(deps, src, 30);
  const queued = await compactForTurn(bg, src, { model: { contextWindow: WINDOW }, prompt: { tokens: 0.8 * WINDOW } });
  expect(queued.memoryId).toBeDefined();
  const text = (await exportPage(deps, src)).text;
  expect(text).toContain('"status":"QUEUED"');
  const copy = key("copy-queued");
  await importProcess(deps, copy, text, { remapIds: false });
  const memory = (await store.getMemory(copy, queued.memoryId!))!;
  expect(memory).toMatchObject({ status: "DISCARDED", metadata: { discardReason: "imported" } });
  const snap = await readAll(store, copy);
  expect(snap.view!.folds).toEqual([]);
  expect(findViolations(snap, { settled: true })).toEqual([]);
});

it("a tenant's imports have their own rate: past it, a 429 naming when to retry, with nothing written", async () => {
  const at = new Date("2026-03-01T10:00:30.000Z");
  const limited = depsOver(store, { importsPerMinute: 2, clock: { now: () => at } });
  const tenant = "imp1-rate";
  await importProcess(limited, key("r1", tenant), twoFolds, { remapIds: true });
  await importProcess(limited, key("r2", tenant), twoFolds, { remapIds: true });
  const third = importProcess(limited, key("r3", tenant), twoFolds, { remapIds: true });
  await expect(third).rejects.toMatchObject({ kind: "too_many_requests", code: "import.rate_limited", details: { limit: 2, retryAfterSeconds: 30 } });
  expect(await partition(key("r3", tenant))).toEqual([]);
  // Another tenant's imports are counted apart.
  await importProcess(limited, key("r1", "imp1-other"), twoFolds, { remapIds: true });
});
