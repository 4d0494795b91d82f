/**
 * The OpenAPI document cannot disagree with the code: the committed docs/openapi.json and
 * docs/events.schema.json are exactly what the generator writes from the schemas the routes and
 * handlers parse with, every route the local runner serves is in it (and nothing else), and every
 * error code the service raises is listed under the status it goes out with.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createLocalBus } from "../../core/adapters/events/local-bus.js";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import { openApiRoute } from "../../core/adapters/http/openapi-route.js";
import { ERROR_CODES, errorBody } from "../../core/adapters/http/responses.js";
import { silentLog } from "../../core/adapters/log.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { EVENTS } from "../../core/domain/events.js";
import { localRoutes } from "../../local/local-routes.js";
import { API_VERSION, buildOpenApiDocument, generatedFiles } from "../../tools/openapi/document.js";
import { OPERATIONS } from "../../tools/openapi/operations.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
type Json = Record<string, any>;

describe("the generated documents", () => {
  it.each(Object.keys(generatedFiles()))("%s is what `npm run openapi` writes from the code", (file) => {
    expect(read(file), `${file} is stale: run npm run openapi`).toBe(generatedFiles()[file]);
  });

  it("is OpenAPI 3.1 carrying the API version and bearer authentication, public routes excepted", () => {
    const doc = buildOpenApiDocument() as Json;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe(API_VERSION);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const open = Object.entries(doc.paths as Json).flatMap(([p, item]) =>
      Object.entries(item as Json).filter(([, op]) => (op as Json).security?.length === 0).map(([m]) => `${m.toUpperCase()} ${p}`),
    );
    expect(open.sort()).toEqual(["GET /health", "GET /openapi.json"]);
  });

  it("describes each request body with the schema its route parses, limits included", () => {
    const schemas = (buildOpenApiDocument() as Json).components.schemas;
    // Read as sent: the caller may omit what has a default, and tags before they are normalised.
    // Role and content may be left out beside native content, which then decides them.
    expect(schemas.MessageInput.required).toBeUndefined();
    expect(schemas.MessageInput.properties.native.properties.format.enum).toEqual(["anthropic", "openai-responses", "gemini", "ai-sdk"]);
    expect(schemas.TurnInput.properties.format.enum).toEqual(["anthropic", "openai-responses", "gemini", "ai-sdk", "openai-chat"]);
    expect(schemas.MessageInput.additionalProperties).toBe(false);
    // Lower case as the model SDKs write it, upper case as stored.
    expect(schemas.MessageInput.properties.role.enum).toEqual(["USER", "ASSISTANT", "SYSTEM", "TOOL", "user", "assistant", "system", "tool"]);
    expect(schemas.MessageInput.properties.tags.maxItems).toBe(50);
    expect(schemas.TurnInput.properties.prompt.properties.text.maxLength).toBe(100_000);
    const turn = (buildOpenApiDocument() as Json).paths["/v1/processes/{processId}/turns"].post;
    expect(turn.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/TurnInput" });
    expect(turn.parameters).toEqual([expect.objectContaining({ name: "processId", in: "path", required: true })]);
  });

  it("gives every event of the catalogue its detail schema and envelope", () => {
    const events = JSON.parse(generatedFiles()["docs/events.schema.json"]!) as Json;
    expect(Object.keys(events.$defs).sort()).toEqual(Object.keys(EVENTS).sort());
    expect(events.$defs.PlanCompleted.required).toEqual(["tenantId", "processId", "planId", "topicLabel", "completedAt"]);
    expect(events.oneOf).toHaveLength(Object.keys(EVENTS).length);
  });
});

/** `GET /v1/processes/{processId}` keys of every route the local runner serves (the PutEvents alias with a trailing slash aside). */
function servedRoutes(): string[] {
  const app = createHttpApp({
    deps: createDeps({ env: {}, log: silentLog }),
    resolveTenant: () => null,
    groups: [...allRouteGroups, openApiRoute(async () => "{}")],
  });
  localRoutes(app, { bus: createLocalBus(silentLog), tenantOfKey: async () => null });
  return [
    ...new Set(
      app.routes
        .filter((r) => r.method !== "ALL" && !r.path.endsWith("/"))
        .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`),
    ),
  ].sort();
}

describe("the routes", () => {
  it("documents every route the local runner serves, and only those", () => {
    const documented = OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort();
    expect(documented).toEqual(servedRoutes());
  });

  it("gives every operation a success answer and its error answers", () => {
    const doc = buildOpenApiDocument() as Json;
    for (const op of OPERATIONS) {
      const responses = doc.paths[op.path][op.method].responses as Json;
      expect(Object.keys(responses).some((s) => s.startsWith("2")), op.operationId).toBe(true);
      if (op.path.startsWith("/v1/")) expect(Object.keys(responses), op.operationId).toEqual(expect.arrayContaining(["400", "401", "403", "429", "500"]));
    }
  });
});

/** Every error code the service's source raises, with the status its kind goes out as (core/adapters/http/errors.ts). */
function raisedCodes(): Array<{ code: string; status: number }> {
  const status: Record<string, number> = { input: 400, auth: 401, not_found: 404, conflict: 409, too_large: 413, too_many_requests: 429 };
  const files = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : [],
    );
  const found: Array<{ code: string; status: number }> = [];
  for (const file of [...files("core"), ...files("local")]) {
    const text = read(file);
    for (const m of text.matchAll(/new AppError\(\s*"(\w+)",\s*"([^"]+)"/g)) if (m[1] !== "internal") found.push({ code: m[2]!, status: status[m[1]!]! });
    for (const m of text.matchAll(/\b(invalid|lineError)\(\s*"([^"]+)"/g)) found.push({ code: m[2]!, status: 400 });
    for (const m of text.matchAll(/\bconflict\(\s*"([^"]+)"/g)) found.push({ code: m[1]!, status: 409 });
    // notFound(what, id, code?): the code's first part is `code` when given.
    for (const m of text.matchAll(/\bnotFound\(\s*"([^"]+)"(?:\s*,[^,)]+,\s*"([^"]+)")?/g)) found.push({ code: `${m[2] ?? m[1]}.not_found`, status: 404 });
    // A body written by hand: its status is the `status:` that follows it, else the route's own (401 local, 404).
    for (const m of text.matchAll(/code: "([a-z_]+\.[a-z_.]+)"/g)) {
      const statement = text.slice(m.index, text.indexOf(";", m.index));
      const given = /status: (\d{3})/.exec(statement)?.[1];
      found.push({ code: m[1]!, status: given ? Number(given) : file.includes("local") ? 401 : 404 });
    }
  }
  return found;
}

describe("the error codes", () => {
  it("finds the codes the service raises (the scan itself works)", () => {
    const codes = raisedCodes().map((c) => `${c.status} ${c.code}`);
    for (const known of ["400 request.invalid", "400 import.duplicate_id", "404 inbox_item.not_found", "409 memory.not_newest", "413 message.too_large", "429 budget.exceeded", "404 route.not_found", "401 auth.invalid_key", "400 model.context_window_required"]) {
      expect(codes).toContain(known);
    }
  });

  it("lists every code the service raises under the status it goes out with", () => {
    // A status the API never answers (the local runner's 421 for a foreign Host) is documented in api.md instead.
    const apiDoc = read("docs/api.md");
    const missing = raisedCodes().filter(({ code, status }) =>
      status in ERROR_CODES ? !(ERROR_CODES[status as keyof typeof ERROR_CODES] as readonly string[]).includes(code) : !apiDoc.includes(`${status} \`${code}\``) && !apiDoc.includes(code),
    );
    expect(missing).toEqual([]);
  });

  it("describes the error body with exactly the codes of its status", () => {
    expect(errorBody(409).safeParse({ error: { code: "process.busy", message: "x", details: { activeSummaryId: null } } }).success).toBe(true);
    expect(errorBody(409).safeParse({ error: { code: "process.not_found", message: "x" } }).success).toBe(false);
    expect(errorBody(500).safeParse({ error: { code: "internal", message: "internal error" } }).success).toBe(true);
  });
});
