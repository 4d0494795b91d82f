/**
 * Export and import of a process (docs/api.md, "Export and import"), against DynamoDB Local:
 * export -> import into a new id -> export gives the same lines (ids kept, or remapped
 * consistently), a paged export equals a one-page one, and every bad file is refused with nothing
 * written.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ImportingStore, ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { EXPORT_PAGE_BYTES, exportPage, type ExportCursor } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { requireProcess, upsertProcess } from "../../core/services/processes.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";
import { refusal as refusalOf } from "../support/refusal.js";
import { appendSteps, exportAll, foldHard } from "../support/steps.js";

const TENANT = "exp";
const WINDOW = 10_000;
let table: Awaited<ReturnType<typeof freshTable>>;
let store: ImportingStore;
let deps: ServiceDeps;
let source: ProcessKey;

const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });

beforeAll(async () => {
  table = await freshTable("exp");
  store = table.store;
  ({ deps } = testContainer({ store, retryDelaysMs: [] }));
  source = key("source-1");
  await upsertProcess(deps, TENANT, source.processId, { projectId: "proj", name: "dock plan", title: "Docks" });
  await appendSteps(deps, source, 24);
  await foldHard(deps, source, WINDOW);
  await appendSteps(deps, source, 16, 24);
  await foldHard(deps, source, WINDOW);
  await appendSteps(deps, source, 6, 40);
  const third = await compactManually(deps, source, { model: { contextWindow: WINDOW }, force: "HARD" });
  await revertMemory(deps, source, third.result.memoryId!);
  await store.putSettings(TENANT, "proj", { softThreshold: 0.5 }, "2026-01-01T00:00:00.000Z");
}, 60_000);


/** The lines past the header, with the process id replaced by `as` (each line names its process). */
const body = (lines: string[], processId: string, as: string) => lines.slice(1).map((l) => l.replaceAll(`"processId":"${processId}"`, `"processId":"${as}"`));

const partition = (k: ProcessKey) => table.partition(k);
const refusal = (p: Promise<unknown>) => refusalOf(p, (e) => ({ line: e.details?.line }));

describe("exporting a process", () => {
  it("lists the process, every message (archived ones too), every memory of every status, the settings and an end line that counts them", async () => {
    const { lines, pages } = await exportAll(deps, source);
    expect(pages).toHaveLength(1);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed[0]).toEqual({ format: "vancetope-memory-export", version: 2, processId: "source-1", exportedAt: expect.any(String) });
    expect(parsed[1]).toMatchObject({ kind: "process", process: { processId: "source-1", name: "dock plan" }, activeSummaryId: expect.any(String) });
    const messages = parsed.filter((p) => p.kind === "message");
    expect(messages.length).toBeGreaterThanOrEqual(46);
    expect(messages.some((m) => m.message.archivedInMemoryId !== null)).toBe(true);
    const statuses = parsed.filter((p) => p.kind === "memory").map((p) => p.memory.status);
    expect(new Set(statuses)).toEqual(new Set(["OK", "REVERTED"]));
    expect(parsed.at(-2)).toEqual({ kind: "settings", projectId: "proj", overrides: { softThreshold: 0.5 } });
    expect(parsed.at(-1)).toEqual({ kind: "end", messages: messages.length, memories: statuses.length });
  });

  it("a paged export, followed by its cursors, gives the same lines as a one-page export", async () => {
    const whole = await exportAll(deps, source);
    const paged = await exportAll(deps, source, { limits: { pageBytes: 1, readMessages: 7 } });
    expect(paged.pages.length).toBeGreaterThan(5);
    expect(paged.lines.slice(1)).toEqual(whole.lines.slice(1));
  });

  it("a page ends before the line that would pass its byte budget, memory lines included; a larger line goes alone", async () => {
    const pageBytes = 2_000;
    const whole = await exportAll(deps, source);
    let pages = 0;
    let cursor: ExportCursor | undefined;
    const lines: string[] = [];
    do {
      const page = await exportPage(deps, source, cursor, { pageBytes, readMessages: 7 });
      const own = page.text.split("\n").filter((l) => l !== "");
      // Lines 1 and 2 open the first page; past them, a page passes the budget only with one line.
      const counted = pages === 0 ? own.slice(2) : own;
      if (counted.length > 1) expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(pageBytes);
      lines.push(...own);
      pages++;
      cursor = page.next;
    } while (cursor);
    expect(lines.slice(1)).toEqual(whole.lines.slice(1));
  });

  it("a page holds the lines that reach its budget exactly, and one line fewer one byte under it", async () => {
    const whole = (await exportAll(deps, source)).text;
    const firstLines = whole.split("\n").slice(0, 5).map((l) => `${l}\n`);
    const exact = firstLines.reduce((n, l) => n + Buffer.byteLength(l), 0);
    const count = async (pageBytes: number) => (await exportPage(deps, source, undefined, { pageBytes, readMessages: 500 })).text.split("\n").length - 1;
    expect(await count(exact)).toBe(5);
    expect(await count(exact - 1)).toBe(4);
  });

  it("an export of messages full of control characters (six bytes each in JSON) keeps its pages within EXPORT_PAGE_BYTES", { timeout: 120_000 }, async () => {
    const k = key("escapes-1");
    await upsertProcess(deps, TENANT, k.processId, { projectId: "proj" });
    for (let i = 0; i < 20; i++) await appendMessage(deps, k, { role: "ASSISTANT", content: "\u0001".repeat(68_000) });
    const page = await exportPage(deps, k);
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(EXPORT_PAGE_BYTES);
    expect((await exportAll(deps, k)).lines.filter((l) => l.startsWith('{"kind":"message"'))).toHaveLength(20);
  });

  it("a deleted or unknown process is a 404", async () => {
    expect(await refusal(exportPage(deps, key("nobody")))).toEqual({ kind: "not_found", code: "process.not_found", line: undefined });
  });
});

describe("importing an export", () => {
  it("export -> import (ids kept) -> export gives the same lines, and the replay is the source's", async () => {
    const before = await exportAll(deps, source);
    const imported = await importProcess(deps, key("copy-1"), before.text, { remapIds: false });
    expect(imported).toMatchObject({ messages: before.lines.filter((l) => l.startsWith('{"kind":"message"')).length });
    const after = await exportAll(deps, key("copy-1"), { limits: { pageBytes: 1, readMessages: 5 } });
    expect(body(after.lines, "copy-1", "source-1")).toEqual(before.lines.slice(1));
    const [a, b] = [await requireProcess(deps, source), await requireProcess(deps, key("copy-1"))];
    expect(b.activeSummaryId).toBe(a.activeSummaryId);
    expect(b.hasUserMessage).toBe(true);
  });

  it("the project's settings line is restored where the project has none (another tenant), kept where it has one, refused where it does not fit", async () => {
    const before = await exportAll(deps, source);
    expect((await importProcess(deps, key("copy-3"), before.text, { remapIds: false })).settings).toBe("kept");

    const elsewhere: ProcessKey = { tenantId: "exp-moved", processId: "moved-1" };
    expect(await store.getSettings(elsewhere.tenantId, "proj")).toBeNull();
    expect((await importProcess(deps, elsewhere, before.text, { remapIds: false })).settings).toBe("restored");
    expect(await store.getSettings(elsewhere.tenantId, "proj")).toEqual({ softThreshold: 0.5 });
    const after = await exportAll(deps, elsewhere);
    expect(body(after.lines, "moved-1", "source-1")).toEqual(before.lines.slice(1));

    // A tenant that clears tool results from 45%, below the file's soft threshold (50%): the messages come, the settings do not.
    const strict: ProcessKey = { tenantId: "exp-strict", processId: "moved-2" };
    await store.putSettings(strict.tenantId, undefined, { clearThreshold: 0.45 }, "2026-01-01T00:00:00.000Z");
    const refused = await importProcess(deps, strict, before.text, { remapIds: false });
    expect(refused).toMatchObject({ settings: "refused", messages: before.lines.filter((l) => l.startsWith('{"kind":"message"')).length });
    expect(await store.getSettings(strict.tenantId, "proj")).toBeNull();
  });

  it("with remapIds: new ids everywhere, every reference rewritten, the same lines otherwise", async () => {
    const before = await exportAll(deps, source);
    await importProcess(deps, key("copy-2"), before.text, { remapIds: true });
    const after = await exportAll(deps, key("copy-2"));
    const ids = (lines: string[]) => lines.flatMap((l) => {
      const p = JSON.parse(l);
      return p.kind === "message" ? [p.message.id as string] : p.kind === "memory" ? [p.memory.id as string] : [];
    });
    const [oldIds, newIds] = [ids(before.lines), ids(after.lines)];
    expect(newIds).toHaveLength(oldIds.length);
    expect(newIds.filter((id) => oldIds.includes(id))).toEqual([]);
    const map = new Map(oldIds.map((id, i) => [id, newIds[i]!]));
    // Every old id in the source's lines, replaced by its new id, gives the copy's lines; the
    // content is the caller's text and stays as it was, ids or not.
    const rewritten = body(before.lines, "source-1", "copy-2").map((l) => {
      const out = JSON.parse(l.replace(/(msg|mem)_[0-9A-Z]{26}/g, (id) => map.get(id) ?? id));
      const original = JSON.parse(l);
      for (const kind of ["message", "memory"]) if (out[kind]) out[kind].content = original[kind].content;
      return JSON.stringify(out);
    });
    expect(body(after.lines, "copy-2", "copy-2")).toEqual(rewritten);
    const state = await requireProcess(deps, key("copy-2"));
    expect(state.activeSummaryId).toBe(map.get((await requireProcess(deps, source)).activeSummaryId!));
    // The copy replays and folds like any process.
    await appendSteps(deps, key("copy-2"), 2, 100);
  });

  describe("a bad file is refused with nothing written", () => {
    let good: string[];
    beforeAll(async () => {
      good = (await exportAll(deps, source)).lines;
    });
    const text = (lines: string[]) => `${lines.join("\n")}\n`;
    const messageAt = () => good.findIndex((l) => l.startsWith('{"kind":"message"'));
    const cases: Array<[string, () => string, () => { code: string; line?: number }]> = [
      ["a newer format version", () => text([good[0]!.replace('"version":2', '"version":3'), ...good.slice(1)]), () => ({ code: "import.version_unsupported", line: 1 })],
      ["a file cut short (no end line)", () => text(good.slice(0, -3)), () => ({ code: "import.truncated" })],
      ["a file missing a message the end line counts", () => text([...good.slice(0, messageAt()), ...good.slice(messageAt() + 1)]), () => ({ code: "import.truncated" })],
      ["a line of another process", () => text(good.map((l, i) => (i === messageAt() + 2 ? l.replace('"processId":"source-1"', '"processId":"other-9"') : l))), () => ({ code: "import.foreign_line", line: messageAt() + 3 })],
      ["a message id twice", () => text(good.map((l, i) => (i === messageAt() + 1 ? good[messageAt()]! : l))), () => ({ code: "import.duplicate_id", line: messageAt() + 2 })],
      ["a line that is not JSON", () => text(good.map((l, i) => (i === 4 ? l.slice(0, 20) : l))), () => ({ code: "import.invalid_line", line: 5 })],
      ["a line that fails its schema", () => text(good.map((l, i) => (i === 5 ? l.replace('"role":"', '"role":"X') : l))), () => ({ code: "import.invalid_line", line: 6 })],
      ["an empty body", () => "", () => ({ code: "import.invalid_line", line: 1 })],
      ["settings of another project", () => text(good.map((l, i) => (i === good.length - 2 ? l.replace('"projectId":"proj"', '"projectId":"other"') : l))), () => ({ code: "import.invalid_line", line: good.length - 1 })],
    ];
    for (const [name, file, expected] of cases) {
      it(name, async () => {
        const target = key(`bad-${name.replace(/[^a-z]+/g, "-")}`);
        const got = await refusal(importProcess(deps, target, file(), { remapIds: true }));
        expect(got).toMatchObject({ kind: "input", ...expected() });
        expect(await partition(target)).toEqual([]);
      });
    }

    it("a process deleted while its import writes takes nothing more: the import is a 404 and only the tombstone is left", async () => {
      let reached!: () => void;
      const atWrite = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // Holds the item writes until the test has deleted the process.
      const held: ImportingStore = {
        ...store,
        async putImportedItems(k, token, items) {
          reached();
          await released;
          return store.putImportedItems(k, token, items);
        },
      };
      const target = key("raced-1");
      const importing = refusal(importProcess({ ...deps, store: held }, target, text(good), { remapIds: false }));
      await atWrite;
      expect(await deleteProcess(deps, target)).toEqual({ status: "deleted" });
      release();
      expect(await importing).toMatchObject({ kind: "not_found", code: "process.not_found" });
      expect((await partition(target)).map((i) => i.sk)).toEqual(["META"]);
    });

    it("an existing process is a 409 and stays as it was; a deleted one too", async () => {
      const items = await partition(source);
      expect(await refusal(importProcess(deps, source, text(good), { remapIds: false }))).toMatchObject({ kind: "conflict", code: "process.exists" });
      expect(await partition(source)).toEqual(items);

      const gone = key("gone-1");
      await upsertProcess(deps, TENANT, gone.processId, { projectId: "proj" });
      await deleteProcess(deps, gone);
      expect(await refusal(importProcess(deps, gone, text(good), { remapIds: false }))).toMatchObject({ kind: "conflict", code: "process.deleted" });
      expect((await partition(gone)).map((i) => i.sk)).toEqual(["META"]);
    });
  });
});
