/**
 * `npm run processes -- export|import` against DynamoDB Local: a file well past the HTTP import's
 * 400 KB imported line by line, every line validated before anything is written, and export ->
 * import -> export giving the same lines (ids kept, or remapped consistently).
 */
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { createUlidIds } from "../../core/adapters/ids.js";
import { silentLog } from "../../core/adapters/log.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { MessageInput } from "../../core/domain/fields.js";
import type { Memory, Message } from "../../core/domain/model.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import { endLine, headerLine, memoryLine, messageLine, processLine } from "../../core/domain/process-export.js";
import { estimateTokens, messageTokens } from "../../core/domain/tokens.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { appendMessage, getMessage } from "../../core/services/messages.js";
import { requireProcess, upsertProcess } from "../../core/services/processes.js";
import { fileLines, runProcessesCli } from "../../scripts/processes.js";
import { freshTable } from "../support/dynamo.js";

const TENANT = "cli";
const MESSAGES = 3_000;
let table: Awaited<ReturnType<typeof freshTable>>;
let env: Record<string, string>;
let dir: string;
const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });

async function cli(...argv: string[]) {
  return cliWith({}, ...argv);
}

async function cliWith(inject: { blobs?: BlobStore }, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runProcessesCli(argv, { env, ...inject, out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const partition = (k: ProcessKey) => table.partition(k);

/**
 * An export of 3,000 messages a second apart: the first 1,000 archived in a superseded summary,
 * the next 1,000 in the active one that chains it, the rest active.
 */
const content = (i: number) => `step ${i}: crate ${i} goes to dock ${i % 4} on day ${i % 6}; `.repeat(5);
const summary = (from: number) => `crates ${from} to ${from + 999} went to their docks`;

function generatedExport(processId: string): string {
  const ids = createUlidIds();
  const t0 = Date.parse("2026-01-01T00:00:00.000Z");
  const at = (i: number) => new Date(t0 + i * 1000);
  const messageIds = Array.from({ length: MESSAGES }, (_, i) => ids.message(at(i)));
  const [older, newer] = [ids.memory(at(1_000)), ids.memory(at(2_000))];
  const messages = messageIds.map(
    (id, i): Message => ({
      id,
      processId,
      role: i % 2 === 0 ? "USER" : "ASSISTANT",
      content: content(i),
      tags: i % 100 === 0 ? ["decision"] : [],
      createdAt: at(i).toISOString(),
      archivedInMemoryId: i < 1_000 ? older : i < 2_000 ? newer : null,
      // The service's own count: an import counts again.
      tokens: messageTokens({ content: content(i) }),
    }),
  );
  const memory = (id: string, from: number, over: Partial<Memory>): Memory => ({
    id,
    processId,
    kind: "ARCHIVED_CHAT",
    status: "OK",
    content: summary(from),
    sourceRefs: messageIds.slice(from, from + 1_000),
    metadata: { compactedMessages: 1_000, provider: "offline", model: "offline" },
    createdAt: at(from + 1_000).toISOString(),
    supersededAt: null,
    tokens: estimateTokens(summary(from)),
    ...over,
  });
  const memories = [
    memory(newer, 1_000, { metadata: { compactedMessages: 1_000, provider: "offline", model: "offline", supersededMemoryId: older } }),
    memory(older, 0, { supersededAt: at(2_000).toISOString(), supersededByMemoryId: newer }),
  ];
  return [
    headerLine(processId, at(MESSAGES).toISOString()),
    processLine({ processId, projectId: "docks", name: "dock plan", allowsCrossProjectSpawn: false, createdAt: at(0).toISOString() }, newer),
    ...messages.map(messageLine),
    ...memories.map(memoryLine),
    endLine(messages.length, memories.length),
  ].join("");
}

const linesOf = (file: string) => readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
/** The lines past the header, each naming `as` where it named `processId`. */
const body = (lines: string[], processId: string, as: string) => lines.slice(1).map((l) => l.replaceAll(`"processId":"${processId}"`, `"processId":"${as}"`));

let generated: string;

beforeAll(async () => {
  table = await freshTable("cli");
  env = { TABLE_NAME: table.tableName, DYNAMODB_ENDPOINT: table.endpoint };
  dir = mkdtempSync(path.join(tmpdir(), "processes-cli-"));
  generated = path.join(dir, "generated.ndjson");
  writeFileSync(generated, generatedExport("origin"));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm run processes -- import, for files past the HTTP limit", () => {
  // Two imports of 3,000 messages: about 5 s each on a quiet machine, 15 s under load.
  it("imports a 3,000-message file (well past 400 KB); export -> import -> export gives the same lines, ids kept or remapped", { timeout: 120_000 }, async () => {
    expect(readFileSync(generated).length).toBeGreaterThan(3 * 400 * 1024);
    const first = await cli("import", "--tenant", TENANT, "--process", "first", "--file", generated, "--json");
    expect(first).toMatchObject({ code: 0 });
    expect(JSON.parse(first.out)).toEqual({ tenantId: TENANT, processId: "first", messages: MESSAGES, memories: 2, settings: "none" });
    const exported = path.join(dir, "first.ndjson");
    expect((await cli("export", "--tenant", TENANT, "--process", "first", "--file", exported)).code).toBe(0);
    // What the file said is what the table holds (the service writes the fields in its own order).
    const parsed = (lines: string[]) => lines.map((l) => JSON.parse(l) as unknown);
    expect(parsed(body(linesOf(exported), "first", "origin"))).toEqual(parsed(body(linesOf(generated), "origin", "origin")));

    expect((await cli("import", "--tenant", TENANT, "--process", "remapped", "--file", exported, "--remap-ids")).code).toBe(0);
    const again = path.join(dir, "remapped.ndjson");
    expect((await cli("export", "--tenant", TENANT, "--process", "remapped", "--file", again)).code).toBe(0);
    const ids = (lines: string[]) =>
      lines.flatMap((l) => {
        const p = JSON.parse(l);
        return p.kind === "message" ? [p.message.id as string] : p.kind === "memory" ? [p.memory.id as string] : [];
      });
    const [before, after] = [linesOf(exported), linesOf(again)];
    const [oldIds, newIds] = [ids(before), ids(after)];
    expect(newIds).toHaveLength(MESSAGES + 2);
    expect(new Set([...oldIds, ...newIds]).size).toBe(2 * (MESSAGES + 2));
    // Every old id replaced by its new one gives the copy's lines (no content names an id here).
    const map = new Map(oldIds.map((id, i) => [id, newIds[i]!]));
    const rewritten = body(before, "first", "remapped").map((l) => l.replace(/(msg|mem)_[0-9A-Z]{26}/g, (id) => map.get(id) ?? id));
    expect(body(after, "remapped", "remapped")).toEqual(rewritten);

    // Both replay and take turns like any process.
    const deps = createDeps({ env: {}, store: table.store, log: silentLog });
    const state = await requireProcess(deps, key("remapped"));
    expect(state.activeSummaryId).toBe(map.get(JSON.parse(before[1]!).activeSummaryId));
    expect(state.hasUserMessage).toBe(true);
    await appendMessage(deps, key("first"), { role: "USER", content: "one more crate" });
    await appendMessage(deps, key("remapped"), { role: "USER", content: "one more crate" });
  });

  it("imports a file whose messages pass DynamoDB's 4 MB transaction together (30 of 190,000 characters)", { timeout: 120_000 }, async () => {
    const t0 = Date.parse("2026-02-01T00:00:00.000Z");
    const ids = createUlidIds();
    const lines = Array.from({ length: 30 }, (_, i) => {
      const at = new Date(t0 + i * 1000);
      const content = `${i} `.padEnd(190_000, "x");
      return messageLine({ id: ids.message(at), processId: "big", role: "USER", content, tags: [], createdAt: at.toISOString(), archivedInMemoryId: null, tokens: messageTokens({ content }) });
    });
    const text = [headerLine("big", new Date(t0).toISOString()), processLine({ processId: "big", projectId: "docks", allowsCrossProjectSpawn: false, createdAt: new Date(t0).toISOString() }, null), ...lines, endLine(30, 0)].join("");
    expect(Buffer.byteLength(text)).toBeGreaterThan(5 * 1024 * 1024);
    const file = path.join(dir, "big.ndjson");
    writeFileSync(file, text);
    const run = await cli("import", "--tenant", TENANT, "--process", "big-copy", "--file", file, "--json");
    expect(run.err).toBe("");
    expect(run).toMatchObject({ code: 0 });
    expect(JSON.parse(run.out)).toMatchObject({ messages: 30 });
  });

  describe("a bad file writes nothing and names its line", () => {
    const lines = () => readFileSync(generated, "utf8").split("\n").slice(0, -1);
    const cases: Array<[string, (l: string[]) => string[], string]> = [
      ["the last message line is not JSON", (l) => l.map((x, i) => (i === MESSAGES + 1 ? x.slice(0, 40) : x)), `refused (import.invalid_line): line ${MESSAGES + 2}: not a JSON value`],
      ["the end line counts a message more", (l) => [...l.slice(0, -1), endLine(MESSAGES + 1, 2).trimEnd()], "refused (import.truncated): the end line counts 3001 messages"],
      ["a newer format version", (l) => [l[0]!.replace('"version":2', '"version":3'), ...l.slice(1)], "refused (import.version_unsupported): line 1: format version 3 is newer"],
    ];
    for (const [name, edit, message] of cases) {
      it(name, async () => {
        const file = path.join(dir, `bad-${name.replace(/[^a-z]+/g, "-")}.ndjson`);
        writeFileSync(file, `${edit(lines()).join("\n")}\n`);
        const target = key(`bad-${name.replace(/[^a-z]+/g, "-")}`);
        const run = await cli("import", "--tenant", TENANT, "--process", target.processId, "--file", file);
        expect(run.code).toBe(1);
        expect(run.err).toContain(message);
        expect(await partition(target)).toEqual([]);
      });
    }
  });

  it("carries native content through a file: exported whole, imported with its large parts as blobs, and refused with its line and path when a block is invalid", async () => {
    const blobs = createMemoryBlobStore();
    const deps = createDeps({ env: {}, store: table.store, log: silentLog });
    deps.blobs = blobs;
    const src = key("native-src");
    await upsertProcess(deps, TENANT, src.processId, { projectId: "docks" });
    const large = "crate manifest 📦 ".repeat(1_000);
    const content = [
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" + "z".repeat(300) },
      { type: "function_call", call_id: "call_1", name: "read", arguments: JSON.stringify({ manifest: large }) },
    ];
    const { message } = await appendMessage(deps, src, MessageInput.parse({ native: { format: "openai-responses", content } }));
    const file = path.join(dir, "native.ndjson");
    expect((await cliWith({ blobs }, "export", "--tenant", TENANT, "--process", src.processId, "--file", file)).code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain(large.slice(0, 50));

    const copyBlobs = createMemoryBlobStore();
    expect((await cliWith({ blobs: copyBlobs }, "import", "--tenant", TENANT, "--process", "native-copy", "--file", file)).code).toBe(0);
    const copyDeps = { ...deps, blobs: copyBlobs };
    expect((await getMessage(copyDeps, key("native-copy"), message.id)).native).toEqual({ format: "openai-responses", content });
    expect(await copyBlobs.list(key("native-copy"))).toHaveLength(1);

    const bad = linesOf(file).map((l) => l.replace('"call_id":"call_1",', ""));
    const badFile = path.join(dir, "native-bad.ndjson");
    writeFileSync(badFile, `${bad.join("\n")}\n`);
    const at = bad.findIndex((l) => l.includes('"function_call"')) + 1;
    const run = await cliWith({ blobs: copyBlobs }, "import", "--tenant", TENANT, "--process", "native-bad", "--file", badFile);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`refused (import.invalid_line): line ${at}: message.native.content.1.call_id`);
    expect(await partition(key("native-bad"))).toEqual([]);
  });

  it("an unknown process exports no file; usage mistakes exit 2", async () => {
    const file = path.join(dir, "nobody.ndjson");
    const run = await cli("export", "--tenant", TENANT, "--process", "nobody", "--file", file);
    expect(run).toMatchObject({ code: 1, err: "refused (process.not_found): process 'nobody' not found" });
    expect(existsSync(file)).toBe(false);
    expect((await cli("import", "--tenant", TENANT, "--process", "x")).code).toBe(2);
    expect((await cli("import", "--tenant", TENANT, "--process", "x", "--file", path.join(dir, "missing.ndjson"))).code).toBe(2);
    expect((await cli("copy", "--tenant", TENANT, "--process", "x", "--file", file)).code).toBe(2);
  });

  it("a file that changes between the validating read and the writing read is refused", async () => {
    const file = path.join(dir, "moving.ndjson");
    writeFileSync(file, "a\nb\n");
    const lines = fileLines(file);
    const read = async () => {
      const out: string[] = [];
      for await (const l of lines()) out.push(l);
      return out;
    };
    expect(await read()).toEqual(["a", "b"]);
    writeFileSync(file, "a\nb\nc\n");
    await expect(read()).rejects.toThrow("changed while it was imported");
  });
});
