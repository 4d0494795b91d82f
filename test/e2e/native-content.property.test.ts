/**
 * Native content is kept exactly, whatever JSON it holds (docs/api.md, "Native content"): random
 * content within the limits (nested to the depth limit, any Unicode with lone surrogates and
 * emoji, strings past the inline part size that become blobs, `__proto__` keys) appended over
 * HTTP reads back the same through GET messages, GET message, a turn's `request` in its own format,
 * and an export imported into a new process: JSON-equal, and the JSON text of every string the same.
 * An import over HTTP refuses a native block by the append's rules.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { NATIVE_INLINE_PART_BYTES, NATIVE_MAX_DEPTH } from "../../core/domain/native/blob-parts.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import { startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];
let blobs: BlobStore;

beforeAll(async () => {
  blobs = createMemoryBlobStore();
  // One import per sample: more than a tenant's default import rate allows in a minute.
  ctx = await startTestService({ overrides: { blobs, importsPerMinute: 1000 } });
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One UTF-16 unit of any value: lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u));
const shortString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: codeUnit, maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.constantFrom("🧠", "\ud800", "a\udc00b", "👩‍👩‍👧", "\u0000", '"\\', ""),
);
/** Past the inline part size in UTF-8 bytes, so it is kept as a blob. */
const longString = shortString.map((s) => {
  const unit = s === "" ? "x" : s;
  return unit.repeat(Math.ceil((NATIVE_INLINE_PART_BYTES + 100) / unit.length));
});
const anyString = fc.oneof({ weight: 6, arbitrary: shortString }, { weight: 1, arbitrary: longString });
const key = fc.oneof({ weight: 4, arbitrary: shortString }, { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "0", "10") });

/** An object with own keys exactly as given (`__proto__` a key like any other, as JSON.parse makes it). */
const objectOf = (entries: Array<[string, Json]>): Json => {
  const o: Record<string, Json> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  return o;
};

const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    anyString,
    fc.array(tie("json"), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie("json")), { maxLength: 4 }).map(objectOf),
  ),
}));

/** A value nested `depth` levels deep (arrays and objects by turns), a string at the bottom. */
const deep = (depth: number, leaf: string): Json => {
  let v: Json = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : objectOf([["__proto__", v]]);
  return v;
};

/** Keys a Gemini part is read by (they decide its role): the other keys are free. */
const GEMINI_KEYS = new Set(["text", "thought", "thoughtSignature", "functionCall", "functionResponse", "inlineData", "fileData"]);
const geminiPart = fc
  .array(fc.tuple(key.filter((k) => !GEMINI_KEYS.has(k)), json), { minLength: 1, maxLength: 3 })
  .map((entries) => objectOf(entries));

// A block's fields sit at depth 3 (content, block, field): `deep` reaches the depth limit at most.
const sample = fc.record({
  thinking: anyString,
  signature: anyString,
  text: anyString,
  input: fc.array(fc.tuple(key, json), { maxLength: 4 }).map(objectOf),
  deepLevels: fc.integer({ min: 1, max: NATIVE_MAX_DEPTH - 2 }),
  deepLeaf: anyString,
  extra: json,
  resultText: anyString,
  gemini: fc.array(geminiPart, { minLength: 1, maxLength: 3 }),
});

const create = (id: string) => api("PUT", `/v1/processes/${id}`, { body: { projectId: "prop" } });
const post = (id: string, body: unknown) => api("POST", `/v1/processes/${id}/messages`, { body });
const turn = (id: string, format: string) => api("POST", `/v1/processes/${id}/turns`, { body: { model: { contextWindow: 1_000_000 }, format } });

/** The JSON text of every string in `v`, in document order: what must be byte-identical. */
function stringTexts(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(JSON.stringify(v));
  else if (Array.isArray(v)) for (const x of v) stringTexts(x, out);
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      out.push(JSON.stringify(k));
      stringTexts(x, out);
    }
  }
  return out;
}

function same(got: unknown, sent: unknown, where: string) {
  expect(JSON.stringify(got), where).toBe(JSON.stringify(sent));
  expect(stringTexts(got), where).toEqual(stringTexts(sent));
}

async function exportText(id: string): Promise<string> {
  let text = "";
  let cursor: string | null = null;
  do {
    const res: Response = await fetch(`${ctx.service.url}/v1/processes/${id}/export${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`, {
      headers: { authorization: "Bearer key-a" },
    });
    expect(res.status).toBe(200);
    text += await res.text();
    cursor = res.headers.get("export-next-cursor");
  } while (cursor);
  return text;
}

let run = 0;
/** What the runs met, so the property is shown not to pass by never meeting a case. */
const met = { blobs: 0, loneSurrogates: 0, protoKeys: 0 };

describe("native content, whatever JSON it holds", () => {
  it("reads back exactly through every read, a turn's request and an export imported elsewhere", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(sample, async (s) => {
        const id = `prop-${++run}`;
        await create(id);
        await post(id, { role: "USER", content: "start" });
        const call = [
          { type: "thinking", thinking: s.thinking, signature: s.signature },
          { type: "text", text: s.text },
          { type: "tool_use", id: "toolu_1", name: "probe", input: s.input },
          // An unknown block type is kept as it is, with whatever it holds.
          { type: "future_block", deep: deep(s.deepLevels, s.deepLeaf), extra: s.extra },
        ];
        const result = [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: s.resultText }], extra: s.extra }];
        const sent: Array<{ format: string; content: unknown[] }> = [
          { format: "anthropic", content: call },
          { format: "anthropic", content: result },
          { format: "gemini", content: s.gemini },
        ];
        const ids: string[] = [];
        for (const [i, native] of sent.entries()) {
          const res = await post(id, { ...(native.format === "gemini" ? { role: "USER" } : {}), native });
          expect(res.status, JSON.stringify(res.body).slice(0, 400)).toBe(201);
          same(res.body.message.native, native, `append answer ${i}`);
          ids.push(res.body.message.id);
        }

        const listed = (await api("GET", `/v1/processes/${id}/messages?limit=10`)).body.items as Array<{ id: string; native?: unknown }>;
        for (const [i, mid] of ids.entries()) {
          same(listed.find((m) => m.id === mid)?.native, sent[i], `GET messages ${i}`);
          same((await api("GET", `/v1/processes/${id}/messages/${mid}`)).body.message.native, sent[i], `GET message ${i}`);
        }

        const anthropic = await turn(id, "anthropic");
        expect(anthropic.status).toBe(200);
        const messages = anthropic.body.request.messages as Array<{ role: string; content: unknown[] }>;
        same(messages.find((m) => m.role === "assistant")?.content, call, "anthropic request: the assistant turn");
        same(messages.find((m) => (m.content[0] as { type?: string })?.type === "tool_result")?.content, result, "anthropic request: the tool result");
        const gemini = await turn(id, "gemini");
        const contents = gemini.body.request.contents as Array<{ role: string; parts: unknown[] }>;
        same(contents.find((c) => JSON.stringify(c.parts) === JSON.stringify(s.gemini))?.parts, s.gemini, "gemini request: the native content");

        const text = await exportText(id);
        const imported = await api("POST", `/v1/processes/${id}-copy/import`, { rawBody: text, headers: { "content-type": "application/x-ndjson" } });
        expect(imported.status, JSON.stringify(imported.body).slice(0, 400)).toBe(201);
        const copy = (await api("GET", `/v1/processes/${id}-copy/messages?limit=10`)).body.items as Array<{ id: string; native?: unknown }>;
        for (const [i, mid] of ids.entries()) same(copy.find((m) => m.id === mid)?.native, sent[i], `imported copy ${i}`);
        // The copy's large parts are its own blobs.
        const own = await blobs.list({ tenantId: "tenant-a", processId: id });
        expect((await blobs.list({ tenantId: "tenant-a", processId: `${id}-copy` })).sort()).toEqual(own.sort());
        const wire = JSON.stringify(sent);
        met.blobs += own.length;
        if (/\\ud[89a-f][0-9a-f]{2}/.test(wire)) met.loneSurrogates++;
        if (wire.includes('"__proto__"')) met.protoKeys++;
      }),
      { numRuns: 25, seed: 20261201 },
    );
    expect(met.blobs).toBeGreaterThan(0);
    expect(met.loneSurrogates).toBeGreaterThan(0);
    expect(met.protoKeys).toBeGreaterThan(0);
  });

  it("an import over HTTP refuses a native block an append would refuse, naming its line and path, and writes nothing", async () => {
    await create("bad-src");
    await post("bad-src", { native: { format: "anthropic", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "text", text: "hi" }] } });
    const lines = (await exportText("bad-src")).split("\n").filter((l) => l !== "");
    const at = lines.findIndex((l) => l.includes('"thinking"'));
    const spoiled = lines.map((l, i) => (i === at ? l.replace('"signature":"s"', '"signature":7') : l)).join("\n") + "\n";
    const res = await api("POST", "/v1/processes/bad-copy/import", { rawBody: spoiled, headers: { "content-type": "application/x-ndjson" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "import.invalid_line", details: { line: at + 1 } });
    expect(res.body.error.message).toContain(`line ${at + 1}: message.native.content.0.signature`);
    expect((await api("GET", "/v1/processes/bad-copy")).status).toBe(404);
  });
});
