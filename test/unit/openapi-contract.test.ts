/**
 * The check every e2e answer goes through (test/support/openapi-contract.ts) refuses what
 * docs/openapi.json does not describe: a wrong body, an undocumented status or media type, a body
 * where none is described, an unknown route answered with anything but a 404.
 */
import { describe, expect, it } from "vitest";
import { checkedFetch, ContractViolation, createContractChecker, documentChecker, type Answer } from "../support/openapi-contract.js";

const json = (value: unknown) => JSON.stringify(value);
const answer = (over: Partial<Answer> & Pick<Answer, "method" | "path" | "status">): Answer => ({
  headers: new Headers({ "content-type": "application/json; charset=UTF-8" }),
  body: "",
  ...over,
});
const message = {
  id: "msg_1",
  processId: "p-1",
  role: "USER",
  content: "hello",
  tags: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 6,
};
const appended = (body: unknown, status = 201) =>
  answer({ method: "POST", path: "/v1/processes/p-1/messages", status, body: json(body) });

describe("the document's checker", () => {
  const checker = documentChecker();

  it("accepts an answer the document describes", () => {
    expect(checker.check(appended({ message }))).toEqual([]);
    expect(checker.check(appended({ message }, 200))).toEqual([]);
    expect(checker.check(answer({ method: "GET", path: "/health", status: 200, body: json({ ok: true }) }))).toEqual([]);
  });

  it("refuses a body that misses a field, has one too many, or has a wrong type", () => {
    const { tokens: _, ...withoutTokens } = message;
    expect(checker.check(appended({ message: withoutTokens })).join()).toMatch(/body\/message must have required property 'tokens'/);
    expect(checker.check(appended({ message: { ...message, secret: 1 } })).join()).toMatch(/body\/message must NOT have additional properties \("secret"\)/);
    expect(checker.check(appended({ message: { ...message, role: "ROBOT" } })).join()).toMatch(/body\/message\/role must be equal to one of the allowed values/);
    expect(checker.check(answer({ method: "GET", path: "/health", status: 200, body: "not json" })).join()).toMatch(/not JSON/);
  });

  it("refuses a status, a media type or a body the operation does not describe", () => {
    expect(checker.check(appended({ message }, 418)).join()).toMatch(/POST \/v1\/processes\/\{processId\}\/messages -> 418: status not described/);
    const html = answer({ method: "GET", path: "/health", status: 200, headers: new Headers({ "content-type": "text/html" }), body: "<p>ok</p>" });
    expect(checker.check(html).join()).toMatch(/media type "text\/html" not described/);
    const deleted = answer({ method: "DELETE", path: "/v1/processes/p-1", status: 204, headers: new Headers() });
    expect(checker.check(deleted)).toEqual([]);
    expect(checker.check({ ...deleted, body: json({ ok: true }) }).join()).toMatch(/describes no body/);
  });

  it("checks each line of an NDJSON export against the line's schema", () => {
    const exported = (body: string) =>
      answer({ method: "GET", path: "/v1/processes/p-1/export", status: 200, headers: new Headers({ "content-type": "application/x-ndjson" }), body });
    const problems = checker.check(exported(`${json({ kind: "nonsense" })}\nnot json\n`));
    expect(problems.join("\n")).toMatch(/line 1 does not match the document/);
    expect(problems.join("\n")).toMatch(/line 2 is not JSON/);
    expect(checker.check(exported(json({ kind: "nonsense" }))).join()).toMatch(/the last line has no line feed/);
  });

  it("checks each event GET /local/events lists against the event catalogue", () => {
    const listed = (detail: unknown, detailType = "MemoryCompacted") =>
      answer({ method: "GET", path: "/local/events", status: 200, body: json({ items: [{ source: "vancetope.memory", detailType, detail, time: "2026-01-01T00:00:00.000Z" }] }) });
    expect(checker.check(listed({})).join()).toMatch(/item 0 \(MemoryCompacted\) does not match docs\/events.schema.json/);
    expect(checker.check(listed({}, "MemoryRenamed")).join()).toMatch(/item 0 \(MemoryRenamed\) does not match/);
    expect(checker.check(answer({ method: "GET", path: "/local/events", status: 200, body: json({ items: [] }) }))).toEqual([]);
  });

  it("takes the template with the most literal segments, and ignores the query string", () => {
    const notFound = { error: { code: "message.not_found", message: "no such message" } };
    expect(checker.check(answer({ method: "GET", path: "/v1/processes/p-1/messages/m-1?x=1", status: 404, body: json(notFound) }))).toEqual([]);
    expect(checker.check(answer({ method: "GET", path: "/v1/processes/p-1/messages?view=active", status: 200, body: json({ message }) })).join()).toMatch(
      /GET \/v1\/processes\/\{processId\}\/messages -> 200: body does not match/,
    );
  });

  it("lets an unknown route answer only the not-found error", () => {
    const routeNotFound = json({ error: { code: "route.not_found", message: "no route DELETE /v1/processes/p-1/messages" } });
    expect(checker.check(answer({ method: "DELETE", path: "/v1/processes/p-1/messages", status: 404, body: routeNotFound }))).toEqual([]);
    expect(checker.check(answer({ method: "GET", path: "/v1/nowhere", status: 200, body: json({ ok: true }) })).join()).toMatch(/no operation of the document.*only a 404/);
  });

  it("lets the local runner's pages be, but not a JSON answer outside the document", () => {
    const page = (path: string, type: string) => answer({ method: "GET", path, status: 200, headers: new Headers({ "content-type": type }), body: "<html></html>" });
    expect(checker.check(page("/reference", "text/html; charset=UTF-8"))).toEqual([]);
    expect(checker.check(page("/inspector.js", "text/javascript"))).toEqual([]);
    expect(checker.check(page("/v1/secret", "application/json")).join()).toMatch(/only a 404/);
    expect(checker.check({ ...page("/reference", "text/html"), method: "POST" }).join()).toMatch(/only a 404/);
  });
});

describe("checkedFetch", () => {
  const doc = {
    openapi: "3.1.0",
    paths: {
      "/things/{id}": {
        get: {
          responses: {
            "200": { description: "a thing", headers: { "Thing-Version": { required: true, schema: { type: "string" } } }, content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } },
          },
        },
      },
    },
    components: {
      schemas: { Thing: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false } },
      responses: { Error404: { description: "not found", content: { "application/json": { schema: { type: "object" } } } } },
    },
  };
  const checker = createContractChecker(doc);
  const only9 = (origin: string) => (origin === "http://127.0.0.1:9" ? checker : undefined);
  const served = (status: number, body: unknown, headers: Record<string, string> = { "thing-version": "1" }) =>
    (async () => new Response(json(body), { status, headers: { "content-type": "application/json", ...headers } })) as typeof fetch;

  it("rejects the caller's request with a ContractViolation, and reports it", async () => {
    const seen: ContractViolation[] = [];
    const checked = checkedFetch(served(200, { id: 7 }), { checkerOf: only9, onViolation: (v) => seen.push(v) });
    const failure = await checked("http://127.0.0.1:9/things/a").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ContractViolation);
    expect((failure as Error).message).toMatch(/GET \/things\/\{id\} -> 200: body does not match the document: body\/id must be string/);
    expect(seen).toEqual([failure]);
  });

  it("refuses an answer without a header the document requires", async () => {
    const checked = checkedFetch(served(200, { id: "a" }, {}), { checkerOf: only9 });
    await expect(checked("http://127.0.0.1:9/things/a")).rejects.toThrow(/required header Thing-Version missing/);
  });

  it("hands a described answer back whole, the body still unread, and checks the path fetch sends", async () => {
    const checked = checkedFetch(served(200, { id: "a" }), { checkerOf: only9 });
    const res = await checked(new Request("http://127.0.0.1:9/other/../things/a?x=1"));
    expect(await res.json()).toEqual({ id: "a" });
  });

  it("leaves answers from other origins alone", async () => {
    const checked = checkedFetch(served(500, "anything"), { checkerOf: only9 });
    expect((await checked("http://127.0.0.1:10/things/a")).status).toBe(500);
  });
});
