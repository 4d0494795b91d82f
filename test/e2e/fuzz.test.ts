/**
 * Input fuzzing of every endpoint over HTTP against the local runner. Bodies and query strings are
 * generated from the zod schemas of core/adapters/http/schemas.ts (via JSON Schema, see
 * test/support/fuzz/schema-arbitrary.ts): values of the right shape, values broken in one place,
 * arbitrary JSON and malformed JSON; path ids are real ones, unknown ones and hostile ones
 * (`../`, `#`, very long, NUL, lone surrogates, RTL, zero-width). Whatever comes in: never a 5xx,
 * always the error body of api.md, and a rejected request writes nothing (the table's full
 * contents are compared before and after). Fixed cases cover bodies over 400 KB (413), malformed
 * JSON and invalid UTF-8, wrong methods and missing or unknown keys on every route.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import * as z from "../../core/domain/zod.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import {
  AnswerBody,
  AppendMessageBody,
  CompactionBody,
  ExportQuery,
  InboxQuery,
  ListMessagesQuery,
  ListProcessesQuery,
  MAX_BODY_BYTES,
  MAX_MESSAGE_BODY_BYTES,
  MemoriesQuery,
  PutProcessBody,
  RangeCompactionBody,
  SearchQuery,
  TurnBody,
} from "../../core/adapters/http/schemas.js";
import { Id } from "../../core/domain/fields.js";
import { DEFAULT_TUNABLES, mergeTunables, TunablesOverride } from "../../core/domain/tunables.js";
import { seedTenant, type TenantData } from "../support/fuzz/api-fixture.js";
import { bodyOf, HOSTILE_STRINGS, hostileString, invalidOf, jsonSchemaOf, MALFORMED_JSON, validOf } from "../support/fuzz/schema-arbitrary.js";
import { tableFingerprint } from "../support/fuzz/table-snapshot.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { KEY_A, startTestService } from "../support/service.js";

/** FUZZ_RUNS per route; FUZZ_SEED=<n> replays a run, FUZZ_SEED=random explores new inputs. */
/**
 * The settings body with the cross-field rules the service checks after merging (threshold order),
 * so that the "accepted" bodies generated from it are accepted: without them most random
 * overrides break the order and the endpoint would rarely see a valid one.
 */
const SettingsBody = TunablesOverride.check(
  z.refine((o) => {
    try {
      mergeTunables(DEFAULT_TUNABLES, o);
      return true;
    } catch {
      return false;
    }
  }),
);

/**
 * The turn body without `blockRefused`: it must name a memory of the process that holds a
 * provider's block, which a generated id never does, so every body carrying it would be refused
 * (test/integration/provider-block-lifecycle.test.ts and the provider-fold tests cover it).
 */
const FuzzTurnBody = z.omit(TurnBody, { blockRefused: true });

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const SEED = process.env.FUZZ_SEED === "random" ? undefined : Number(process.env.FUZZ_SEED ?? 20261129);
// A window large enough for every value the tunables' schema allows, so a schema-valid settings
// body is refused only for what the schema itself checks.
const fake = createFakeSummarizer({ contextWindow: 10_000_000 });
let ctx: Awaited<ReturnType<typeof startTestService>>;
let client: DynamoDBDocumentClient;
let data: TenantData;

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  client = createDocumentClient({ endpoint: ctx.service.dynamoEndpoint });
  data = await seedTenant(ctx.api, ctx.service, { tenantId: "tenant-a", key: KEY_A, processId: "fz-1", secret: "fuzzy" });
}, 60_000);
afterAll(async () => ctx?.service.stop());

// ---- the routes --------------------------------------------------------------------------------

type Ids = { process: string; other: string };
interface Endpoint {
  name: string;
  method: "GET" | "PUT" | "POST";
  path: (ids: Ids) => string;
  /** Which path ids exist (the fixture's) when not fuzzed. */
  real: () => Ids;
  body?: z.core.$ZodType;
  query?: z.core.$ZodType;
}

const P = (id: string) => `/v1/processes/${id}`;
const fixture = () => ({ process: data.processId, other: data.memoryId });
const SettingsQuery = z.object({ projectId: z.optional(Id) });
const ContextQuery = z.object({ query: z.optional(z.string().check(z.maxLength(4000))) });

const ENDPOINTS: Endpoint[] = [
  { name: "PUT /v1/processes/{id}", method: "PUT", path: (i) => P(i.process), real: fixture, body: PutProcessBody },
  { name: "GET /v1/processes/{id}", method: "GET", path: (i) => P(i.process), real: fixture },
  { name: "GET /v1/processes", method: "GET", path: () => "/v1/processes", real: fixture, query: ListProcessesQuery },
  { name: "POST messages", method: "POST", path: (i) => `${P(i.process)}/messages`, real: fixture, body: AppendMessageBody },
  { name: "GET messages", method: "GET", path: (i) => `${P(i.process)}/messages`, real: fixture, query: ListMessagesQuery },
  { name: "POST compaction", method: "POST", path: (i) => `${P(i.process)}/compaction`, real: fixture, body: CompactionBody },
  { name: "POST compaction/range", method: "POST", path: (i) => `${P(i.process)}/compaction/range`, real: fixture, body: RangeCompactionBody },
  { name: "POST turns", method: "POST", path: (i) => `${P(i.process)}/turns`, real: fixture, body: FuzzTurnBody },
  { name: "GET context", method: "GET", path: (i) => `${P(i.process)}/context`, real: fixture, query: ContextQuery },
  { name: "GET memories", method: "GET", path: (i) => `${P(i.process)}/memories`, real: fixture, query: MemoriesQuery },
  { name: "GET history/search", method: "GET", path: (i) => `${P(i.process)}/history/search`, real: fixture, query: SearchQuery },
  { name: "GET memories/{id}/sources", method: "GET", path: (i) => `${P(i.process)}/memories/${i.other}/sources`, real: fixture },
  { name: "GET export", method: "GET", path: (i) => `${P(i.process)}/export`, real: fixture, query: ExportQuery },
  { name: "GET /v1/inbox", method: "GET", path: () => "/v1/inbox", real: fixture, query: InboxQuery },
  { name: "POST inbox answer", method: "POST", path: (i) => `/v1/inbox/${i.other}/answer`, real: () => ({ process: data.processId, other: data.itemId }), body: AnswerBody },
  { name: "GET /v1/settings", method: "GET", path: () => "/v1/settings", real: fixture, query: SettingsQuery },
  { name: "PUT /v1/settings", method: "PUT", path: () => "/v1/settings", real: fixture, body: SettingsBody, query: SettingsQuery },
];

// ---- sending ------------------------------------------------------------------------------------

/** Percent-encodes a path segment; lone surrogates become their (invalid) 3-byte encodings. */
function encodeSegment(s: string): string {
  let out = "";
  for (const ch of s) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const c = ch.charCodeAt(0);
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");
    }
  }
  return out;
}

function toQuery(value: unknown): string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value === undefined ? "" : `junk=${encodeSegment(String(value))}`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const values = Array.isArray(v) ? v : [v];
    for (const x of values) parts.push(`${encodeSegment(k)}=${encodeSegment(typeof x === "object" && x !== null ? JSON.stringify(x) : String(x))}`);
  }
  return parts.join("&");
}

interface Sent {
  status: number;
  body: any;
  contentType: string;
}

async function send(method: string, path: string, options: { key?: string | null; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<Sent> {
  const key = options.key === undefined ? KEY_A : options.key;
  const res = await fetch(`${ctx.service.url}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(options.body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers },
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  await ctx.service.bus.drain(); // an accepted offer compacts in the background: let it finish
  return { status: res.status, body, contentType: res.headers.get("content-type") ?? "" };
}

const fingerprint = () => tableFingerprint(client, ctx.service.tableName);

/** The request must not be a 5xx; a refusal carries the error body and leaves the table as it was. */
async function expectSafe(before: string, res: Sent, what: string): Promise<string> {
  expect(res.status, `${what} -> ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(500);
  if (res.status < 400) return fingerprint();
  if (res.contentType.includes("json")) {
    expect(typeof res.body?.error?.code, `${what}: error body ${JSON.stringify(res.body).slice(0, 200)}`).toBe("string");
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+|Exception|stack/);
  }
  const after = await fingerprint();
  expect(after === before, `${what} was refused with ${res.status} but changed the table`).toBe(true);
  return after;
}

// ---- generated requests ---------------------------------------------------------------------------

const idArb = (real: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(real) },
    { weight: 2, arbitrary: validOf(jsonSchemaOf(Id)) as fc.Arbitrary<string> },
    { weight: 3, arbitrary: hostileString.filter((s) => s.length > 0) },
  );

function requestArb(ep: Endpoint) {
  const real = ep.real();
  return fc.record({
    ids: fc.record({ process: idArb(real.process), other: idArb(real.other) }),
    body: ep.body ? bodyOf(ep.body) : fc.constant(undefined),
    query: ep.query
      ? fc.oneof(validOf(jsonSchemaOf(ep.query)), invalidOf(jsonSchemaOf(ep.query)), fc.dictionary(fc.string({ maxLength: 8 }), hostileString, { maxKeys: 3 }))
      : fc.constant(undefined),
    key: fc.constantFrom<string | null>(KEY_A, KEY_A, KEY_A, KEY_A, KEY_A, KEY_A, KEY_A, null, "not-a-key"),
  });
}

describe("fuzzed requests: no 5xx, and nothing written on a refusal", () => {
  it.each(ENDPOINTS)("$name", async (ep) => {
    let before = await fingerprint();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb(ep), async (req) => {
        const segments = { process: encodeSegment(req.ids.process), other: encodeSegment(req.ids.other) };
        const query = req.query === undefined ? "" : toQuery(req.query);
        const path = `${ep.path(segments)}${query ? `?${query}` : ""}`;
        const body = req.body === undefined ? undefined : "raw" in req.body ? req.body.raw : JSON.stringify(req.body.json);
        const res = await send(ep.method, path, { key: req.key, ...(body !== undefined ? { body } : {}) });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        before = await expectSafe(before, res, `${ep.method} ${path.slice(0, 200)} ${String(body).slice(0, 200)}`);
        if (req.key !== KEY_A) expect(res.status).toBe(401);
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Not vacuous: the generated requests were both accepted and refused.
    const tally = JSON.stringify(Object.fromEntries(statuses));
    if (process.env.FUZZ_TALLY) console.log(ep.name, tally);
    expect([...statuses.keys()].some((s) => s >= 400), tally).toBe(true);
    if (ep.name !== "POST inbox answer") expect([...statuses.keys()].some((s) => s < 300), tally).toBe(true);
  }, 120_000);
});

// ---- fixed hostile cases ---------------------------------------------------------------------------

const WITH_BODY = ENDPOINTS.filter((e) => e.body);

describe("hostile bodies", () => {
  it("a body over its route's limit (5 MiB for appends and turns, 400 KB elsewhere) is 413 on every route that reads one, and writes nothing", async () => {
    let before = await fingerprint();
    for (const ep of WITH_BODY) {
      const path = ep.path(ep.real());
      const limit = /\/(messages|turns)$/.test(path) && ep.method === "POST" ? MAX_MESSAGE_BODY_BYTES : MAX_BODY_BYTES;
      const huge = JSON.stringify({ role: "USER", content: "x".repeat(limit + 10), projectId: "p", model: {} });
      const res = await send(ep.method, path, { body: huge });
      expect(res.status, ep.name).toBe(413);
      expect(res.body.error.code).toBe("request.too_large");
      before = await expectSafe(before, res, ep.name);
      // Without a Content-Length (chunked): counted while read, still 413.
      const bytes = new TextEncoder().encode(huge);
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.slice(i, i + 64 * 1024));
          c.close();
        },
      });
      const chunked = await send(ep.method, path, { body: stream });
      expect(chunked.status, `${ep.name} chunked`).toBe(413);
      before = await expectSafe(before, chunked, `${ep.name} chunked`);
    }
  });

  it("a message over the content limit inside a body under 400 KB is 413 and writes nothing", async () => {
    const before = await fingerprint();
    for (const path of [`${P(data.processId)}/messages`, `${P(data.processId)}/turns`]) {
      const message = { role: "USER", content: "é".repeat(150_000) };
      const body = JSON.stringify(path.endsWith("turns") ? { message, model: { contextWindow: 100_000 } } : message);
      expect(Buffer.byteLength(body)).toBeLessThan(MAX_BODY_BYTES);
      const res = await send("POST", path, { body });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe("message.too_large");
      await expectSafe(before, res, path);
    }
  });

  it("malformed JSON, invalid UTF-8 and wrong top-level types are 400 on every route with a body", async () => {
    let before = await fingerprint();
    const raw = fc.sample(MALFORMED_JSON, { numRuns: 30, seed: 7 });
    const bodies: BodyInit[] = [
      ...new Set(raw),
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      new Uint8Array([0xc0, 0xaf]),
      new TextEncoder().encode('{"role":"USER","content":"\u0000"}').map((b) => b),
      "null",
      "[]",
      '"a string"',
      "42",
      "true",
    ];
    for (const ep of WITH_BODY) {
      for (const body of bodies) {
        const res = await send(ep.method, ep.path(ep.real()), { body });
        if (res.status < 400) {
          before = await fingerprint(); // e.g. NUL inside a valid message is fine
          continue;
        }
        expect(res.status, `${ep.name} ${String(body).slice(0, 40)}`).toBe(400);
        before = await expectSafe(before, res, `${ep.name} ${String(body).slice(0, 40)}`);
      }
    }
  }, 60_000);

  it("numbers DynamoDB cannot store (denormal thresholds) are 400, not 500", async () => {
    // Found by this fuzz test: 5e-324 passed validation and DynamoDB refused the number (a 500).
    let before = await fingerprint();
    for (const body of [{ softThreshold: 5e-324, hardThreshold: 1e-323 }, { softThreshold: 1e-131 }, { emergencyThreshold: 1e-200 }]) {
      const res = await send("PUT", "/v1/settings", { body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      before = await expectSafe(before, res, JSON.stringify(body));
    }
  });

  it("does not let __proto__ in a body pollute objects or reach the store", async () => {
    const before = await fingerprint();
    const res = await send("PUT", P(data.processId), { body: '{"projectId":"proj","__proto__":{"polluted":true,"allowsCrossProjectSpawn":true}}' });
    expect(res.status).toBe(400); // unknown key in a strict object
    await expectSafe(before, res, "__proto__");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("hostile ids and routes", () => {
  const HOSTILE_IDS = [
    ...HOSTILE_STRINGS.filter((s) => s.length > 0),
    "x".repeat(10_000),
    "😀".repeat(64),
    "%00",
    "%2e%2e",
  ];

  it("every route with an id refuses hostile ids with 400 or 404, and writes nothing", async () => {
    let before = await fingerprint();
    for (const ep of ENDPOINTS.filter((e) => e.path({ process: "A", other: "B" }) !== e.path({ process: "C", other: "D" }))) {
      const real = ep.real();
      for (const id of HOSTILE_IDS) {
        for (const ids of [{ ...real, process: encodeSegment(id) }, { ...real, other: encodeSegment(id) }]) {
          if (ep.path(ids) === ep.path(real)) continue;
          const valid = ep.body ? fc.sample(validOf(jsonSchemaOf(ep.body)), { numRuns: 1, seed: 1 })[0] : undefined;
          const res = await send(ep.method, ep.path(ids), valid === undefined ? {} : { body: JSON.stringify(valid) });
          if (Id.safeParse(id).success) {
            // A well-formed id (META, constructor...) is just a name: no 5xx is all that is asked.
            before = await expectSafe(before, res, `${ep.name} ${id.slice(0, 30)}`);
            continue;
          }
          expect([400, 404, 431], `${ep.name} ${ep.path(ids).slice(0, 80)} -> ${res.status}`).toContain(res.status);
          before = await expectSafe(before, res, `${ep.name} ${id.slice(0, 30)}`);
        }
      }
    }
  }, 60_000);

  it("raw traversal, overlong and broken percent-encodings in paths are refused", async () => {
    let before = await fingerprint();
    const paths = [
      `/v1/processes/../processes/${data.processId}`,
      `/v1/processes/%2e%2e%2f${data.processId}/messages`,
      `/v1/processes/${data.processId}%2F..%2F..%2Fsettings`,
      `/v1/processes/%C0%AF/messages`,
      `/v1/processes/%ED%A0%80/context`,
      `/v1/processes/%E0%80%80/turns`,
      `/v1/processes/%/messages`,
      `/v1/processes/%zz/messages`,
      `/v1/processes/a%00b`,
      `/v1/inbox/%ff/answer`,
      `/v1/processes/${data.processId}/memories/%ED%BF%BF/sources`,
      `/v1//processes//${data.processId}`,
    ];
    for (const path of paths) {
      for (const method of ["GET", "POST", "PUT"]) {
        const res = await send(method, path, method === "GET" ? {} : { body: '{"role":"USER","content":"x"}' });
        expect(res.status, `${method} ${path}`).toBeLessThan(500);
        if (res.status >= 400) before = await expectSafe(before, res, `${method} ${path}`);
        else before = await fingerprint();
      }
    }
  });

  it("unknown methods and routes are 404 without a write", async () => {
    const before = await fingerprint();
    for (const [method, path] of [
      ["DELETE", `${P(data.processId)}/messages`],
      ["PATCH", `${P(data.processId)}/messages`],
      ["DELETE", `/v1/inbox/${data.itemId}`],
      ["POST", "/v1/processes"],
      ["GET", "/v1/processes/a/b/c/d/e"],
      ["PUT", "/v1/inbox"],
    ] as const) {
      const res = await send(method, path, method === "GET" ? {} : { body: "{}" });
      expect(res.status, `${method} ${path}`).toBe(404);
      await expectSafe(before, res, `${method} ${path}`);
    }
  });

  it("hostile query strings are 400 or answered, never 5xx, and write nothing", async () => {
    const before = await fingerprint();
    const base = P(data.processId);
    for (const path of [
      "/v1/processes?limit=-1",
      "/v1/processes?limit=1e400",
      "/v1/processes?limit=NaN&limit=3",
      "/v1/processes?cursor=%ED%A0%80",
      `/v1/processes?cursor=${Buffer.from(JSON.stringify({ gsi1pk: "T#tenant-b#PROCS", pk: "x", sk: "y" })).toString("base64url")}`,
      `/v1/processes?cursor=${Buffer.from(JSON.stringify({ gsi1pk: { S: "x" } })).toString("base64url")}`,
      `${base}/messages?view=everything`,
      `${base}/messages?limit=0`,
      `${base}/messages?cursor=${Buffer.from(JSON.stringify({ pk: "T#tenant-b#P#fz-1", sk: "M#0" })).toString("base64url")}`,
      `${base}/messages?view=active&cursor=${Buffer.from("a:").toString("base64url")}`,
      `${base}/messages?view=active&cursor=%F0%9F`,
      `${base}/history/search?q=`,
      `${base}/history/search?q=${"a".repeat(1001)}`,
      `${base}/history/search?q=%ED%A0%80&tag=STRENGTH:bogus`,
      `${base}/history/search?q=*&limit=101`,
      `${base}/history/search?q=${encodeURIComponent("a:b OR c* AND -d \"e")}`,
      `${base}/memories?includeFailed=yes`,
      `${base}/memories?kind=FACT`,
      `/v1/inbox?status=open&processId=%00`,
      "/v1/settings?projectId=../x",
    ]) {
      const res = await send("GET", path);
      expect(res.status, path).toBeLessThan(500);
      if (res.status >= 400) await expectSafe(before, res, path);
      // A read never writes, answered or not.
      else expect((await fingerprint()) === before, `${path} changed the table`).toBe(true);
    }
  });
});

describe("missing and unknown keys", () => {
  it("every route answers 401 without a valid key, before reading the body, and writes nothing", async () => {
    const before = await fingerprint();
    for (const ep of ENDPOINTS) {
      const valid = ep.body ? JSON.stringify(fc.sample(validOf(jsonSchemaOf(ep.body)), { numRuns: 1, seed: 3 })[0]) : undefined;
      const variants: Array<Record<string, string>> = [{}, { authorization: "Bearer" }, { authorization: "Bearer unknown-key" }, { authorization: `Basic ${KEY_A}` }, { authorization: `Bearer ${KEY_A} extra` }];
      for (const headers of variants) {
        const res = await send(ep.method, ep.path(ep.real()), { key: null, headers, ...(valid ? { body: valid } : {}) });
        expect(res.status, `${ep.name} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.body.error.code).toBe("auth.invalid_key");
        await expectSafe(before, res, ep.name);
      }
    }
  });
});
