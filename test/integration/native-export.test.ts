/**
 * Export and import of messages with native content (docs/api.md, "Export and import"), against
 * DynamoDB Local: each message line carries its native content whole (blobs put back), a page ends
 * before it would pass its byte budget, an import keeps the large parts as blobs of the new process
 * with the same hash, a version 1 file still imports, and a native block an append would refuse
 * is refused with its line and path, nothing written.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { storedNative } from "../../core/domain/model.js";
import { MessageInput } from "../../core/domain/fields.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, getMessage } from "../../core/services/messages.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";
import { refusal as refusalOf } from "../support/refusal.js";
import { exportAll } from "../support/steps.js";

const TENANT = "nexp";
let table: Awaited<ReturnType<typeof freshTable>>;
let deps: ServiceDeps;
let blobs: BlobStore;
const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });
const source = key("native-src");

const big = "ünïcødé 🧠 ".repeat(2_000); // about 30 KB: past the inline part size, a blob
const anthropicCall = [
  { type: "thinking", thinking: "list it \ud800 first", signature: "sig-" + "x".repeat(200) },
  { type: "text", text: "Listing." },
  { type: "tool_use", id: "toolu_1", name: "ls", input: JSON.parse('{"path":"/tmp","__proto__":{"not":"a prototype"}}') },
];
const anthropicResult = [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: big }] }];
const responsesCall = [
  { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" + "e".repeat(500) },
  { type: "function_call", call_id: "call_1", name: "grep", arguments: '{"q":"x"}' },
];

/** The body as the HTTP layer parses it: the projection derived from the native content. */
const append = (k: ProcessKey, body: unknown) => appendMessage(deps, k, MessageInput.parse(body));

const partition = (k: ProcessKey) => table.partition(k);
const refusal = (p: Promise<unknown>) => refusalOf(p, (e) => ({ message: e.message, line: e.details?.line }));

beforeAll(async () => {
  table = await freshTable("nexp");
  blobs = createMemoryBlobStore();
  ({ deps } = testContainer({ store: table.store, retryDelaysMs: [] }));
  deps.blobs = blobs;
  await upsertProcess(deps, TENANT, source.processId, { projectId: "proj" });
  await append(source, { role: "USER", content: "list /tmp" });
  await append(source, { native: { format: "anthropic", content: anthropicCall } });
  await append(source, { native: { format: "anthropic", content: anthropicResult } });
  await append(source, { native: { format: "openai-responses", content: responsesCall } });
  await append(source, { role: "USER", content: "thanks" });
}, 30_000);

const messageLines = (lines: string[]) => lines.map((l) => JSON.parse(l)).filter((p) => p.kind === "message").map((p) => p.message);

describe("exporting native content", () => {
  it("writes format version 2, and each native message line carries its content whole, the blob put back", async () => {
    const { lines } = await exportAll(deps, source);
    expect(JSON.parse(lines[0]!)).toMatchObject({ version: 2 });
    const messages = messageLines(lines);
    expect(messages.map((m) => m.native?.format ?? null)).toEqual([null, "anthropic", "anthropic", "openai-responses", null]);
    expect(messages[1].native.content).toEqual(JSON.parse(JSON.stringify(anthropicCall)));
    expect(messages[2].native.content[0].content[0].text).toBe(big);
    expect(JSON.stringify(messages[3].native.content)).toBe(JSON.stringify(responsesCall));
  });

  it("a page ends before a message line would pass its budget, and a message larger than the budget is a page of its own", async () => {
    const whole = await exportAll(deps, source);
    const budget = 2_000; // the large tool result's line is about 30 KB
    const paged = await exportAll(deps, source, { limits: { pageBytes: budget, readMessages: 3 } });
    expect(paged.lines.slice(1)).toEqual(whole.lines.slice(1));
    expect(paged.pages.length).toBeGreaterThan(2);
    for (const page of paged.pages.slice(0, -1)) {
      const lines = page.split("\n").filter((l) => l !== "");
      const messageBytes = lines.filter((l) => l.startsWith('{"kind":"message"')).map((l) => Buffer.byteLength(l) + 1);
      if (messageBytes.length > 1 || messageBytes[0]! <= budget) expect(Buffer.byteLength(page)).toBeLessThanOrEqual(budget);
    }
    const alone = paged.pages.find((p) => p.includes(big.slice(0, 40)))!;
    expect(alone.split("\n").filter((l) => l.startsWith('{"kind":"message"'))).toHaveLength(1);
  });
});

describe("importing native content", () => {
  it("keeps the large parts as blobs of the new process, stores the same hash, and reads back exactly", async () => {
    const before = await exportAll(deps, source);
    const target = key("native-copy");
    await importProcess(deps, target, before.text, { remapIds: false });
    const after = await exportAll(deps, target);
    expect(after.lines.slice(1).map((l) => l.replaceAll('"processId":"native-copy"', '"processId":"native-src"'))).toEqual(before.lines.slice(1));
    const [src, copy] = [messageLines(before.lines), messageLines(after.lines)];
    for (let i = 0; i < src.length; i++) {
      const [a, b] = [await getMessage(deps, source, src[i].id), await getMessage(deps, target, copy[i].id)];
      expect(b.native).toEqual(a.native);
      const [sa, sb] = [await rawStored(source, a.id), await rawStored(target, b.id)];
      expect(sb?.hash).toBe(sa?.hash);
    }
    expect((await blobs.list(target)).sort()).toEqual((await blobs.list(source)).sort());
    expect(await blobs.list(target)).not.toHaveLength(0);
  });

  it("with remapIds the native content comes along unchanged", async () => {
    const before = await exportAll(deps, source);
    const target = key("native-remap");
    await importProcess(deps, target, before.text, { remapIds: true });
    const natives = (lines: string[]) => messageLines(lines).map((m) => m.native ?? null);
    expect(natives((await exportAll(deps, target)).lines)).toEqual(natives(before.lines));
  });

  it("a version 1 file (no native content) still imports", async () => {
    const plain = key("plain-src");
    await upsertProcess(deps, TENANT, plain.processId, { projectId: "proj" });
    await append(plain, { role: "USER", content: "hello" });
    await append(plain, { role: "ASSISTANT", content: "hi" });
    const v2 = await exportAll(deps, plain);
    const v1 = [v2.lines[0]!.replace('"version":2', '"version":1'), ...v2.lines.slice(1)].join("\n") + "\n";
    expect(await importProcess(deps, key("plain-copy"), v1, { remapIds: false })).toMatchObject({ messages: 2 });
    expect(messageLines((await exportAll(deps, key("plain-copy"))).lines).map((m) => m.content)).toEqual(["hello", "hi"]);
  });

  const cases: Array<[string, (native: { content: any[] }) => void, string]> = [
    ["a thinking block without its signature", (n) => delete n.content[0].signature, "message.native.content.0.signature"],
    ["a block that is not an object", (n) => (n.content[1] = "text"), "message.native.content.1"],
    ["a role the content contradicts", () => undefined, "message.role"],
  ];
  for (const [name, spoil, path] of cases) {
    it(`an invalid native block is refused with its line and path, nothing written: ${name}`, async () => {
      const { lines } = await exportAll(deps, source);
      const at = lines.findIndex((l) => l.includes('"tool_use"'));
      const parsed = JSON.parse(lines[at]!);
      spoil(parsed.message.native);
      if (path === "message.role") parsed.message.role = "USER";
      const text = lines.map((l, i) => (i === at ? JSON.stringify(parsed) : l)).join("\n") + "\n";
      const target = key(`bad-${name.replace(/[^a-z]+/g, "-")}`);
      const got = await refusal(importProcess(deps, target, text, { remapIds: false }));
      expect(got).toMatchObject({ kind: "input", code: "import.invalid_line", line: at + 1 });
      expect((got as { message: string }).message).toContain(`line ${at + 1}: ${path}`);
      expect(await partition(target)).toEqual([]);
      expect(await blobs.list(target)).toEqual([]);
    });
  }

  it("a file with blobs to keep is refused before anything is written when no blob store is configured", async () => {
    const { text } = await exportAll(deps, source);
    const target = key("no-blobs");
    const { blobs: _none, ...without } = deps;
    expect(await refusal(importProcess(without, target, text, { remapIds: false }))).toMatchObject({ code: "blobs.unconfigured" });
    expect(await partition(target)).toEqual([]);
  });
});

/** The native content as the message item keeps it. */
async function rawStored(k: ProcessKey, id: string) {
  const m = await table.store.getMessage(k, id);
  return m ? storedNative(m) : undefined;
}
