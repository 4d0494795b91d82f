/**
 * Export and import over HTTP and through the npm client (docs/api.md, "Export and import"):
 * `exportProcess` follows the pages, `importProcess` restores them into a new id, and the second
 * export gives the same lines; each bad file is a 4xx that leaves the whole table as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient, MemoryApiError } from "../../client/index.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { MAX_BODY_BYTES } from "../../core/adapters/http/schemas.js";
import { tableFingerprint } from "../support/fuzz/table-snapshot.js";
import { KEY_A, KEY_B, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let exported: string[];

const memory = (apiKey = KEY_A) => createMemoryClient({ baseUrl: ctx.service.url, apiKey });
// The tenant's import counter is not data: an import refused for its id still counts against the rate.
const fingerprint = () =>
  tableFingerprint(createDocumentClient({ endpoint: ctx.service.dynamoEndpoint }), ctx.service.tableName, (i) => !String(i.pk).includes("#RATE#"));
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => (e instanceof MemoryApiError ? { status: e.status, code: e.code, line: (e.details as { line?: number } | undefined)?.line } : e),
  );

async function collect(lines: AsyncIterable<string>) {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

/** Past the header, with every line's process id read as `as`. */
const body = (lines: string[], processId: string, as: string) => lines.slice(1).map((l) => l.replaceAll(`"processId":"${processId}"`, `"processId":"${as}"`));

beforeAll(async () => {
  ctx = await startTestService();
  const client = memory();
  await client.upsertProcess("orig-1", { projectId: "exp", title: "Export me" });
  for (let i = 0; i < 24; i++) await client.appendMessage("orig-1", { role: i % 2 ? "ASSISTANT" : "USER", content: `note ${i}: pallet ${i} to bay ${i % 5}.` });
  const folded = await client.compact("orig-1", { model: { contextWindow: 8000 }, force: "HARD" });
  expect(folded.compacted).toBe(true);
  for (let i = 24; i < 30; i++) await client.appendMessage("orig-1", { role: i % 2 ? "ASSISTANT" : "USER", content: `note ${i}.` });
  // Small pages, so the client has to follow cursors.
  ctx.service.deps.exportPaging = { pageBytes: 1, readMessages: 4 };
  exported = await collect(client.exportProcess("orig-1"));
}, 60_000);
afterAll(async () => ctx?.service.stop());

describe("GET /v1/processes/{processId}/export", () => {
  it("answers NDJSON pages, the next cursor in Export-Next-Cursor, sealed for this export only", async () => {
    const res = await fetch(`${ctx.service.url}/v1/processes/orig-1/export`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const cursor = res.headers.get("export-next-cursor");
    expect(cursor).toBeTruthy();
    expect(JSON.parse((await res.text()).split("\n")[0]!)).toMatchObject({ format: "vancetope-memory-export", version: 2, processId: "orig-1" });
    expect(exported.at(-1)).toMatch(/^\{"kind":"end","messages":30,"memories":1\}$/);

    await memory().upsertProcess("other-1", { projectId: "exp" });
    const foreign = await ctx.api("GET", `/v1/processes/other-1/export?cursor=${encodeURIComponent(cursor!)}`);
    expect(foreign).toMatchObject({ status: 400, body: { error: { code: "cursor.invalid" } } });
    expect(await failure(collect(memory(KEY_B).exportProcess("orig-1")))).toMatchObject({ status: 404, code: "process.not_found" });
  });
});

describe("POST /v1/processes/{processId}/import", () => {
  it("export -> importProcess -> export gives the same lines, ids kept", async () => {
    const client = memory();
    expect(await client.importProcess("copy-1", exported)).toMatchObject({ process: { processId: "copy-1", title: "Export me" }, messages: 30, memories: 1 });
    const again = await collect(client.exportProcess("copy-1"));
    expect(body(again, "copy-1", "orig-1")).toEqual(exported.slice(1));
    // The copy replays its summary like the original.
    expect((await client.getContext("copy-1")).block).toBe((await client.getContext("orig-1")).block);
  });

  it("with remapIds, no message or memory keeps its id, and the copy exports the same number of lines", async () => {
    const client = memory();
    await client.importProcess("copy-2", `${exported.join("\n")}\n`, { remapIds: true });
    const again = await collect(client.exportProcess("copy-2"));
    const ids = (lines: string[]) => lines.map((l) => JSON.parse(l)).flatMap((p) => [p.message?.id, p.memory?.id].filter(Boolean));
    expect(again).toHaveLength(exported.length);
    expect(ids(again).filter((id) => ids(exported).includes(id))).toEqual([]);
  });

  it("each bad file is a 4xx naming the fault, and the table is as it was", async () => {
    const client = memory();
    const messageAt = exported.findIndex((l) => l.startsWith('{"kind":"message"'));
    const bad: Array<[string, string[], { status: number; code: string; line?: number }]> = [
      ["newer version", [exported[0]!.replace('"version":2', '"version":7'), ...exported.slice(1)], { status: 400, code: "import.version_unsupported", line: 1 }],
      ["truncated", exported.slice(0, -1), { status: 400, code: "import.truncated" }],
      ["foreign line", exported.map((l, i) => (i === messageAt ? l.replace('"processId":"orig-1"', '"processId":"someone-else"') : l)), { status: 400, code: "import.foreign_line", line: messageAt + 1 }],
      ["duplicate id", exported.map((l, i) => (i === messageAt + 1 ? exported[messageAt]! : l)), { status: 400, code: "import.duplicate_id", line: messageAt + 2 }],
      ["bad line", exported.map((l, i) => (i === 2 ? "{" : l)), { status: 400, code: "import.invalid_line", line: 3 }],
      ["existing id", exported, { status: 409, code: "process.exists" }],
    ];
    const before = await fingerprint();
    for (const [name, lines, expected] of bad) {
      const target = name === "existing id" ? "orig-1" : `bad-${name.replace(/ /g, "-")}`;
      expect(await failure(client.importProcess(target, lines)), name).toMatchObject(expected);
      expect(await fingerprint(), name).toBe(before);
    }
    const huge = await ctx.api("POST", "/v1/processes/too-big/import", { rawBody: "x".repeat(MAX_BODY_BYTES + 1) });
    expect(huge).toMatchObject({ status: 413, body: { error: { code: "request.too_large" } } });
    expect(await fingerprint()).toBe(before);
  });
});
