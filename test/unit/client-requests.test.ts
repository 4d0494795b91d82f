/**
 * What the npm client sends, against a recording fetch: a method for every operation of
 * docs/openapi.json (each calling its operation's method and path), the environment defaults, the
 * per-attempt timeout, retries (backoff, `Retry-After`, one idempotency key for every attempt of
 * an append) and the caller's abort signal.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryClient, MemoryApiError, type MemoryClient, type MemoryClientOptions } from "../../client/index.js";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const document = JSON.parse(readFileSync(path.join(repoRoot, "docs/openapi.json"), "utf8")) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};

interface Sent {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: unknown;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/** A fetch that records each request and answers from `answers` in turn (then a 400). */
function recordingFetch(answers: Answer[] = []) {
  const sent: Sent[] = [];
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    sent.push({ method: init.method ?? "GET", url: new URL(String(input)), headers, body: typeof init.body === "string" && headers["content-type"] === "application/json" ? JSON.parse(init.body) : init.body });
    const answer = answers.shift() ?? { status: 400, body: { error: { code: "request.invalid", message: "recorded" } } };
    if (answer instanceof Error) throw answer;
    return new Response(answer.status === 204 ? null : JSON.stringify(answer.body ?? {}), { status: answer.status, headers: { "content-type": "application/json", ...answer.headers } });
  };
  return { sent, fetch: fetch as typeof globalThis.fetch };
}

const client = (fetch: typeof globalThis.fetch, options: MemoryClientOptions = {}) =>
  createMemoryClient({ baseUrl: "http://memory.test", apiKey: "k", fetch, maxRetries: 0, ...options });

/**
 * One call of the client method for each operationId. A new operation in the document fails the
 * test below until a method calls it; the recorded request must be the operation's method and path.
 */
const CALLS: Record<string, (c: MemoryClient) => Promise<unknown>> = {
  health: (c) => c.health(),
  getOpenApiDocument: (c) => c.getOpenApiDocument(),
  upsertProcess: (c) => c.upsertProcess("p-1", { projectId: "x" }),
  getProcess: (c) => c.getProcess("p-1"),
  deleteProcess: (c) => c.deleteProcess("p-1"),
  listProcesses: (c) => c.listProcesses(),
  exportProcess: async (c) => {
    for await (const _ of c.exportProcess("p-1"));
  },
  importProcess: (c) => c.importProcess("p-1", "{}\n"),
  appendMessage: (c) => c.appendMessage("p-1", { role: "user", content: "hi" }),
  listMessages: (c) => c.listMessages("p-1"),
  getMessage: (c) => c.getMessage("p-1", "m-1"),
  setMessageStrength: (c) => c.setMessageStrength("p-1", "m-1", "pinned"),
  compact: (c) => c.compact("p-1", { model: { name: "gpt-4o" } }),
  compactRange: (c) => c.compactRange("p-1", { from: "a", to: "b", topicLabel: "t" }),
  getContext: (c) => c.getContext("p-1"),
  runTurn: (c) => c.beginTurn("p-1", { model: { name: "gpt-4o" } }),
  listMemories: (c) => c.listMemories("p-1"),
  getMemory: (c) => c.getMemory("p-1", "mem-1"),
  getMemorySources: (c) => c.getMemorySources("p-1", "mem-1"),
  revertMemory: (c) => c.revertMemory("p-1", "mem-1"),
  searchHistory: (c) => c.searchHistory("p-1", { q: "x" }),
  getSettings: (c) => c.getSettings(),
  putSettings: (c) => c.updateSettings({ softThreshold: 0.5 }),
  listInbox: (c) => c.listInbox(),
  answerInboxItem: (c) => c.answerInboxItem("inb-1", { accepted: true }),
};

/** Operations no engine calls, and why. */
const NOT_IN_THE_CLIENT: Record<string, string> = {
  localListEvents: "the local runner's event log for its inspector (/local/*), not part of a deployed service",
  localPutEvents: "the local runner's stand-in for EventBridge PutEvents (/local/*), which engines reach through AWS in a stage",
};

const operations = Object.entries(document.paths).flatMap(([route, methods]) =>
  Object.entries(methods)
    .filter(([, op]) => typeof op === "object" && op?.operationId)
    .map(([method, op]) => ({ id: op.operationId!, method: method.toUpperCase(), route })),
);

describe("the client covers docs/openapi.json", () => {
  it("reads the document's operations", () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(operations.map((o) => o.id)).toContain("runTurn");
  });

  it("has a method for every operation, or says why the operation is not an engine's", () => {
    const missing = operations.filter((o) => !(o.id in CALLS) && !(o.id in NOT_IN_THE_CLIENT)).map((o) => `${o.method} ${o.route} (${o.id})`);
    expect(missing).toEqual([]);
    // Only the local runner's own routes are left out.
    for (const id of Object.keys(NOT_IN_THE_CLIENT)) expect(operations.find((o) => o.id === id)?.route).toMatch(/^\/local\//);
    // And nothing is mapped that the document does not have.
    expect(Object.keys(CALLS).filter((id) => !operations.some((o) => o.id === id))).toEqual([]);
  });

  it.each(operations.filter((o) => o.id in CALLS))("$id sends $method $route", async ({ id, method, route }) => {
    const { sent, fetch } = recordingFetch();
    await CALLS[id]!(client(fetch)).catch(() => undefined);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.method).toBe(method);
    const pattern = new RegExp(`^${route.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    expect(sent[0]!.url.pathname).toMatch(pattern);
  });
});

describe("createMemoryClient's defaults", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("reads MEMORY_URL and MEMORY_API_KEY when baseUrl and apiKey are not given", async () => {
    vi.stubEnv("MEMORY_URL", "http://from-env.test:3000/");
    vi.stubEnv("MEMORY_API_KEY", "env-key");
    const { sent, fetch } = recordingFetch([{ status: 200, body: { process: { processId: "p-1" } } }]);
    await createMemoryClient({ fetch }).getProcess("p-1");
    expect(sent[0]!.url.href).toBe("http://from-env.test:3000/v1/processes/p-1");
    expect(sent[0]!.headers.authorization).toBe("Bearer env-key");
  });

  it("names the missing setting when neither the option nor the variable is there", () => {
    vi.stubEnv("MEMORY_URL", "");
    vi.stubEnv("MEMORY_API_KEY", "");
    expect(() => createMemoryClient()).toThrow("pass baseUrl or set MEMORY_URL");
    expect(() => createMemoryClient({ baseUrl: "http://x.test" })).toThrow("pass apiKey or set MEMORY_API_KEY");
  });

  it("sends no key to /health and /openapi.json", async () => {
    const { sent, fetch } = recordingFetch([{ status: 200, body: { ok: true } }]);
    expect(await client(fetch).health()).toEqual({ ok: true });
    expect(sent[0]!.headers.authorization).toBeUndefined();
  });
});

describe("retries", () => {
  it("sends an append again after a 503 and a network error, with the same idempotency key each time", async () => {
    const { sent, fetch } = recordingFetch([
      { status: 503, body: { error: { code: "internal", message: "unavailable" } }, headers: { "retry-after": "0" } },
      new TypeError("fetch failed"),
      { status: 201, body: { message: { id: "m-1" } } },
    ]);
    const out = await client(fetch, { maxRetries: 2 }).appendMessage("p-1", { role: "user", content: "hi" });
    expect(out).toEqual({ message: { id: "m-1" }, created: true });
    expect(sent).toHaveLength(3);
    const keys = sent.map((s) => (s.body as { idempotencyKey?: string }).idempotencyKey);
    expect(keys[0]).toMatch(/^c-[0-9a-f-]{36}$/);
    expect(new Set(keys)).toEqual(new Set([keys[0]]));
  });

  it("keeps the caller's idempotency key, in an append and in a turn's message", async () => {
    const { sent, fetch } = recordingFetch([
      { status: 429, body: { error: { code: "rate.limited", message: "slow down", details: { retryAfterSeconds: 0 } } } },
      { status: 200, body: {} },
    ]);
    await client(fetch, { maxRetries: 1 }).beginTurn("p-1", { message: { role: "user", content: "hi", idempotencyKey: "turn-7" }, model: { name: "gpt-4o" } });
    expect(sent.map((s) => (s.body as { message: { idempotencyKey: string } }).message.idempotencyKey)).toEqual(["turn-7", "turn-7"]);
  });

  it("adds no key when retries are off, and does not retry then", async () => {
    const { sent, fetch } = recordingFetch([{ status: 503, body: { error: { code: "internal", message: "unavailable" } } }]);
    const error = await client(fetch, { maxRetries: 0 }).appendMessage("p-1", { role: "user", content: "hi" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, retryable: true });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toEqual({ role: "user", content: "hi" });
  });

  it("gives up after maxRetries, with the last error", async () => {
    const unavailable = { status: 503, body: { error: { code: "internal", message: "unavailable" } }, headers: { "retry-after": "0" } };
    const { sent, fetch } = recordingFetch([unavailable, unavailable, unavailable, unavailable]);
    const error = await client(fetch, { maxRetries: 2 }).getProcess("p-1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemoryApiError);
    expect(error).toMatchObject({ status: 503, code: "internal" });
    expect(sent).toHaveLength(3);
  });

  it("never retries an answer that will not change: a 400, a 404, a reused idempotency key", async () => {
    for (const [status, code] of [[400, "request.invalid"], [404, "process.not_found"], [409, "idempotency.key_reused"], [409, "process.exists"]] as const) {
      const { sent, fetch } = recordingFetch([{ status, body: { error: { code, message: code } } }, { status: 200, body: {} }]);
      const error = await client(fetch, { maxRetries: 3 }).getProcess("p-1").catch((e: unknown) => e);
      expect(error, code).toMatchObject({ status, code, retryable: false });
      expect(sent, code).toHaveLength(1);
    }
  });

  it("retries a 409 that says the process is busy", async () => {
    const { sent, fetch } = recordingFetch([
      { status: 409, body: { error: { code: "process.busy", message: "busy" } }, headers: { "retry-after": "0" } },
      { status: 200, body: { memory: {}, restoredMessages: 1, activeSummaryId: null } },
    ]);
    await client(fetch, { maxRetries: 1 }).revertMemory("p-1", "mem-1");
    expect(sent).toHaveLength(2);
  });

  it("does not wait for a Retry-After longer than a minute: the error goes to the caller", async () => {
    const { sent, fetch } = recordingFetch([{ status: 429, body: { error: { code: "rate.limited", message: "tomorrow" } }, headers: { "retry-after": "3600" } }]);
    const error = await client(fetch, { maxRetries: 3 }).getProcess("p-1").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3_600_000 });
    expect(sent).toHaveLength(1);
  });
});

describe("timeout and signal", () => {
  /** A fetch that never answers until its signal aborts. */
  const hangingFetch = (calls: { n: number }) =>
    ((_: RequestInfo | URL, init: RequestInit = {}) => {
      calls.n++;
      return new Promise<Response>((_, reject) => init.signal!.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    }) as typeof globalThis.fetch;

  it("abandons an attempt after `timeout` ms as request.timeout, and retries it", async () => {
    const calls = { n: 0 };
    const error = await client(hangingFetch(calls), { timeout: 20, maxRetries: 1 })
      .getProcess("p-1", { maxRetries: 1 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 0, code: "request.timeout", retryable: true, message: "GET /v1/processes/p-1: no answer within 20 ms" });
    expect(calls.n).toBe(2);
  });

  it("a per-call timeout overrides the client's", async () => {
    const calls = { n: 0 };
    const error = await client(hangingFetch(calls), { timeout: 60_000 }).getProcess("p-1", { timeout: 10 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "request.timeout", message: expect.stringContaining("within 10 ms") });
  });

  it("rejects with request.aborted when the caller's signal aborts, and sends nothing more", async () => {
    const calls = { n: 0 };
    const controller = new AbortController();
    const pending = client(hangingFetch(calls), { maxRetries: 5 }).listMessages("p-1", {}, { signal: controller.signal });
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 0, code: "request.aborted", retryable: false });
    expect(calls.n).toBe(1);
  });

  it("an already aborted signal sends no request", async () => {
    const { sent, fetch } = recordingFetch([{ status: 200, body: {} }]);
    const error = await client(fetch).getSettings({}, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "request.aborted" });
    expect(sent).toHaveLength(0);
  });

  it("an abort during the backoff between attempts ends the call", async () => {
    const controller = new AbortController();
    const { sent, fetch: recorded } = recordingFetch([{ status: 503, body: { error: { code: "internal", message: "x" } }, headers: { "retry-after": "30" } }]);
    // The first answer reaches the client after this resolves; the client then waits 30 s to retry.
    let answered!: () => void;
    const firstAnswer = new Promise<void>((r) => (answered = r));
    const fetch = (async (...args: Parameters<typeof globalThis.fetch>) => {
      const res = await recorded(...args);
      setImmediate(answered);
      return res;
    }) as typeof globalThis.fetch;
    const pending = client(fetch, { maxRetries: 2 }).getProcess("p-1", { signal: controller.signal });
    await firstAnswer;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "request.aborted" });
    expect(sent).toHaveLength(1);
  });
});
