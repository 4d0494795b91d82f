/**
 * The limits of docs/configuration.md, "Limits", over HTTP against the local runner: the message limit (at it,
 * stored and read back whole; one byte over, 413 and nothing written), `prompt.text`, a body
 * without Content-Length counted while it streams, and signed paging cursors (a malformed,
 * tampered or foreign one is a 400 naming `cursor`, never a 500 and never another's data).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { staticKeyResolver } from "../../core/adapters/http/auth.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import { MAX_MESSAGE_BODY_BYTES, MAX_PROMPT_TEXT_CHARS } from "../../core/adapters/http/schemas.js";
import { MAX_MESSAGE_BYTES } from "../../core/domain/fields.js";
import { callerMessage, LONGEST_ID } from "../support/message-size.js";
import { documentChecker } from "../support/openapi-contract.js";
import { KEY_A, KEY_B, startTestService, type ApiResponse } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];
let seq = 0;

beforeAll(async () => {
  ctx = await startTestService();
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(status);
  expect(res.body.error.code).toBe(code);
}

/** A fresh process with the longest id the API accepts. */
async function newProcess(): Promise<string> {
  const n = `-${++seq}`;
  const id = "p".repeat(LONGEST_ID - n.length) + n;
  expect((await api("PUT", `/v1/processes/${id}`, { body: { projectId: "limits" } })).status).toBe(200);
  return id;
}

const history = async (id: string) => (await api("GET", `/v1/processes/${id}/messages?limit=1000`)).body.items as any[];

describe("the message limit over HTTP", () => {
  it("a 220,000-character message is 413 message.too_large (not 500) and writes nothing", async () => {
    const id = await newProcess();
    expectError(await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: "x".repeat(220_000) } }), 413, "message.too_large");
    expect(await history(id)).toEqual([]);
  });

  for (const role of ["USER", "ASSISTANT", "TOOL"] as const) {
    it(`${role} at the limit is stored and read back whole; one byte more is 413 and writes nothing`, async () => {
      const id = await newProcess();
      const body = callerMessage(role, MAX_MESSAGE_BYTES);
      const created = await api("POST", `/v1/processes/${id}/messages`, { body });
      expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(201);
      const one = await api("GET", `/v1/processes/${id}/messages/${created.body.message.id}`);
      expect(one.body.message.content).toBe(body.content);
      expect(one.body.message.toolCalls).toEqual((body as { toolCalls?: unknown }).toolCalls);
      expect((await history(id)).map((m) => m.content)).toEqual([body.content]);

      const over = callerMessage(role, MAX_MESSAGE_BYTES + 1);
      expectError(await api("POST", `/v1/processes/${id}/messages`, { body: over }), 413, "message.too_large");
      const turn = await api("POST", `/v1/processes/${id}/turns`, { body: { message: over, model: { contextWindow: 1_000_000 } } });
      expectError(turn, 413, "message.too_large");
      expect(await history(id)).toHaveLength(1);
    });
  }
});

describe("prompt.text", () => {
  it(`holds at most ${MAX_PROMPT_TEXT_CHARS} characters: past it a 400 naming the field, on turns and compactions`, async () => {
    const id = await newProcess();
    const at = { model: { contextWindow: 1_000_000 }, prompt: { text: "x".repeat(MAX_PROMPT_TEXT_CHARS) } };
    expect((await api("POST", `/v1/processes/${id}/turns`, { body: at })).status).toBe(200);
    const past = { ...at, prompt: { text: "x".repeat(MAX_PROMPT_TEXT_CHARS + 1) } };
    for (const path of ["turns", "compaction"]) {
      const res = await api("POST", `/v1/processes/${id}/${path}`, { body: past });
      expectError(res, 400, "request.invalid");
      expect(res.body.error.details.fields).toEqual(["body.prompt.text"]);
    }
  });
});

describe("a body without Content-Length", () => {
  it("is refused with 413 once past the limit, without reading the rest", async () => {
    const app = createHttpApp({ deps: ctx.service.deps, resolveTenant: staticKeyResolver(new Map([[KEY_A, "tenant-a"]])), groups: allRouteGroups });
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    const total = 8 * 1024 * 1024;
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled >= total) return c.close();
        pulled += chunk.byteLength;
        c.enqueue(chunk);
      },
    });
    const path = "/v1/processes/streamed/messages";
    const res = await app.request(path, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    // In process, not over the runner's port: checked against the document here, like every e2e answer.
    expect(documentChecker().check({ method: "POST", path, status: res.status, headers: res.headers, body: await res.clone().text() })).toEqual([]);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("request.too_large");
    // Read a chunk or two past the limit, not the whole 8 MB (the stream may buffer one ahead).
    expect(pulled).toBeLessThanOrEqual(MAX_MESSAGE_BODY_BYTES + 3 * chunk.byteLength);
  });
});

describe("signed cursors", () => {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

  async function pagedProcess(): Promise<string> {
    const id = await newProcess();
    for (let i = 0; i < 5; i++) await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: `message ${i}` } });
    return id;
  }

  it("page through every listing with the cursors the service hands out", async () => {
    const id = await pagedProcess();
    for (const view of ["all", "active"]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await api("GET", `/v1/processes/${id}/messages?view=${view}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((m: any) => m.content));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen, view).toEqual([0, 1, 2, 3, 4].map((i) => `message ${i}`));
    }
    const first = await api("GET", "/v1/processes?limit=1");
    const second = await api("GET", `/v1/processes?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.status).toBe(200);
    expect(second.body.items[0].processId).not.toBe(first.body.items[0].processId);
  });

  it("a forged, tampered, truncated or another listing's cursor is a 400 naming cursor, never a 500", async () => {
    const id = await pagedProcess();
    const other = await pagedProcess();
    const page = (await api("GET", `/v1/processes/${id}/messages?limit=2`)).body;
    const active = (await api("GET", `/v1/processes/${id}/messages?view=active&limit=2`)).body;
    const procs = (await api("GET", "/v1/processes?limit=1")).body;
    const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === "A" ? "B" : "A") + s.slice(at + 1);
    const pk = `T#tenant-a#P#${id}`;
    const cases: Array<[string, string]> = [
      // Unsigned keys of this tenant's own partition that DynamoDB would refuse (missing or wrong key parts).
      [`/v1/processes/${id}/messages`, b64({ pk })],
      [`/v1/processes/${id}/messages`, b64({ pk, sk: "M#x", lsi1sk: "A#0" })],
      ["/v1/processes", b64({ gsi1pk: "T#tenant-a#PROCS" })],
      [`/v1/processes/${id}/messages`, "not a cursor"],
      [`/v1/processes/${id}/messages`, page.nextCursor.slice(0, -5)],
      [`/v1/processes/${id}/messages`, flip(page.nextCursor, 3)],
      [`/v1/processes/${id}/messages`, flip(page.nextCursor, page.nextCursor.length - 3)],
      [`/v1/processes/${id}/messages?view=active`, flip(active.nextCursor, 2)],
      [`/v1/processes/${id}/messages?view=active`, page.nextCursor], // another view's
      [`/v1/processes/${id}/messages`, active.nextCursor],
      [`/v1/processes/${other}/messages`, page.nextCursor], // another process's
      ["/v1/processes?projectId=limits", procs.nextCursor], // another listing's
      [`/v1/processes/${id}/messages`, procs.nextCursor],
    ];
    for (const [path, cursor] of cases) {
      const res = await api("GET", `${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`);
      expectError(res, 400, "cursor.invalid");
      expect(res.body.error.details.fields, `${path} ${cursor}`).toEqual(["query.cursor"]);
    }
  });

  it("another tenant's cursor is a 400 and returns none of its data", async () => {
    const id = await pagedProcess();
    const page = (await api("GET", `/v1/processes/${id}/messages?limit=2`)).body;
    await api("PUT", `/v1/processes/${id}`, { key: KEY_B, body: { projectId: "limits" } });
    const res = await api("GET", `/v1/processes/${id}/messages?limit=2&cursor=${encodeURIComponent(page.nextCursor)}`, { key: KEY_B });
    expectError(res, 400, "cursor.invalid");
    expect(JSON.stringify(res.body)).not.toContain("message ");
  });
});
