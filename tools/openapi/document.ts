/**
 * Builds the OpenAPI 3.1 document of the HTTP contract (docs/openapi.json) from the route list
 * (operations.ts), with zod's own JSON Schema output: the request schemas as the handlers read
 * them (`io: "input"`: before defaults and transforms), the answers as the services produce them
 * (`io: "output"`). Runs at build time only (`npm run openapi`); no Lambda bundle imports it.
 */
import * as z from "../../core/domain/zod.js";
import { ERROR_CODES, GatewayMessage, ListedMemory, StoredMemory, errorBody, type ErrorStatus } from "../../core/adapters/http/responses.js";
import { Id } from "../../core/domain/fields.js";
import { InboxItem, MemoryMetadata, Message, Process } from "../../core/domain/model.js";
import { Tunables, TunablesOverride } from "../../core/domain/tunables.js";
import { ExportEntryLine, ExportHeader } from "../../core/domain/process-export.js";
import { bareSchema, buildEventSchemas } from "./events.js";
import { OPERATIONS, TAGS, type Named, type Operation } from "./operations.js";

/**
 * The contract's version. A change that removes or renames a path, a field or an enum value
 * needs a new major version (and its snapshot, docs/openapi.v<major>.snapshot.json); additions
 * keep the major (test/unit/openapi-compat.test.ts).
 */
export const API_VERSION = "1.0.0";

type Json = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** What each error status means, as its response's description. */
const ERROR_MEANING: Record<ErrorStatus, string> = {
  400: "Invalid input: `details.fields` names the fields at fault (`body.x`, `query.y`, `path.z`); nothing is written.",
  401: "Missing or unknown API key. Deployed, API Gateway answers a missing Authorization header itself (`{ message: \"Unauthorized\" }`).",
  404: "Unknown process or item (also another tenant's, or a deleted process).",
  409: "A conflict with the process's state: `error.code` says which.",
  413: "A body over 400 KB (`request.too_large`) or a message over 200,000 bytes (`message.too_large`); `details.limit`.",
  429: "A limit of the tenant that resets with time (`Retry-After` seconds, also `details.retryAfterSeconds`); deployed, also API Gateway's stage throttle (`{ message }`).",
  500: "An internal error; no internals are shown.",
};

/** One answer of each error status, as the service writes it (the linter checks each against its schema). */
const ERROR_EXAMPLE: Record<ErrorStatus, Json> = {
  400: {
    code: "request.invalid",
    message: "invalid body: body.role: Invalid option: expected one of \"USER\"|\"ASSISTANT\"|\"SYSTEM\"|\"TOOL\"",
    details: { fields: ["body.role"], issues: [{ field: "body.role", message: "Invalid option: expected one of \"USER\"|\"ASSISTANT\"|\"SYSTEM\"|\"TOOL\"" }] },
  },
  401: { code: "auth.invalid_key", message: "missing or unknown API key (Authorization: Bearer <key>)" },
  404: { code: "process.not_found", message: "process 'p-1' not found" },
  409: { code: "memory.not_newest", message: "only the newest active summary can be reverted; it is 'mem_01J0000000000000000000000'", details: { activeSummaryId: "mem_01J0000000000000000000000" } },
  413: { code: "request.too_large", message: "request body is 409601 bytes; the limit is 409600", details: { limit: 409600 } },
  429: { code: "rate.limited", message: "more than 20 requests per second for this tenant; retry after 1 s", details: { limit: 20, retryAfterSeconds: 1 } },
  500: { code: "internal", message: "internal error" },
};

/** Registers a named schema once; the same name for another schema is a mistake in operations.ts. */
function register(registry: z.core.$ZodRegistry<{ id: string }>, seen: Map<string, unknown>, [name, schema]: Named) {
  const known = seen.get(name);
  if (known && known !== schema) throw new Error(`two schemas are named ${name}`);
  if (!known) registry.add(schema, { id: name });
  seen.set(name, schema);
}

/** The JSON Schema of every named schema, as components whose references point at each other. */
function components(named: Named[], io: "input" | "output"): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  const seen = new Map<string, unknown>();
  for (const n of named) register(registry, seen, n);
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(Object.entries(schemas).map(([name, s]) => [name, bareSchema(s as Json)]));
}

/** One schema inline (query and path parameters: primitives, never referenced). */
const inline = (schema: z.ZodMiniType) => bareSchema(z.toJSONSchema(schema, { io: "input", metadata: z.registry() }) as Json);

function parameters(op: Operation): Json[] {
  const path = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: "path", required: true, schema: inline(Id) }));
  const query = op.query ? inline(op.query) : { properties: {} };
  const required = new Set((query.required as string[] | undefined) ?? []);
  const fromQuery = Object.entries((query.properties ?? {}) as Record<string, Json>).map(([name, schema]) => ({
    name,
    in: "query",
    required: required.has(name),
    schema,
  }));
  const headers = Object.entries(op.headers ?? {}).map(([name, h]) => ({
    name,
    in: "header",
    required: true,
    description: h.description,
    schema: { type: "string", enum: h.enum },
  }));
  return [...path, ...fromQuery, ...headers];
}

function requestBody(op: Operation): Json | undefined {
  if (op.body) {
    const media: Json = { schema: ref(op.body[0]), ...(op.example !== undefined ? { example: op.example } : {}) };
    return { required: true, content: { [op.bodyMediaType ?? "application/json"]: media } };
  }
  if (op.rawBody) {
    return { required: true, description: op.rawBody.description, content: { [op.rawBody.mediaType]: { schema: op.rawBody.schema ?? { type: "string" } } } };
  }
  return undefined;
}

function responses(op: Operation): Json {
  const out: Json = {};
  for (const [status, answer] of Object.entries(op.answers)) {
    const content = answer.body
      ? { [answer.mediaType ?? "application/json"]: { schema: ref(answer.body[0]) } }
      : answer.raw
        ? { [answer.raw.mediaType]: { schema: answer.raw.schema } }
        : undefined;
    const headers = answer.headers
      ? Object.fromEntries(Object.entries(answer.headers).map(([h, d]) => [h, { description: d.description, schema: { type: "string" } }]))
      : undefined;
    out[status] = { description: answer.description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
  }
  for (const status of op.errors) out[status] = { $ref: `#/components/responses/Error${status}` };
  if (!op.public && op.path.startsWith("/v1/")) out[403] = { $ref: "#/components/responses/GatewayForbidden" };
  return out;
}

function errorResponses(): Json {
  const out: Json = {};
  for (const status of Object.keys(ERROR_CODES).map(Number) as ErrorStatus[]) {
    const body = ref(`Error${status}`);
    // Deployed, API Gateway itself answers some 401s and 429s, in its own shape.
    const schema = status === 401 || status === 429 ? { anyOf: [body, ref("GatewayMessage")] } : body;
    out[`Error${status}`] = {
      description: ERROR_MEANING[status],
      ...(status === 429 ? { headers: { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } } } } : {}),
      content: { "application/json": { schema, example: { error: ERROR_EXAMPLE[status] } } },
    };
  }
  out.GatewayForbidden = {
    description: "Deployed only: the authorizer denied an unknown, revoked or malformed key (API Gateway's own answer).",
    content: { "application/json": { schema: ref("GatewayMessage"), example: { message: "Forbidden" } } },
  };
  return out;
}

/** Every schema the operations name, plus the error bodies. */
function allComponents(): Record<string, Json> {
  const inputs = OPERATIONS.flatMap((op) => (op.body ? [op.body] : []));
  const outputs: Named[] = [
    ...OPERATIONS.flatMap((op) => Object.values(op.answers).flatMap((a) => (a.body ? [a.body] : []))),
    ...(Object.keys(ERROR_CODES).map(Number) as ErrorStatus[]).map((s): Named => [`Error${s}`, errorBody(s)]),
    ["GatewayMessage", GatewayMessage],
    // The shapes answers share (docs/api.md defines each once), referenced rather than repeated.
    ["Message", Message],
    ["Memory", StoredMemory],
    ["ListedMemory", ListedMemory],
    ["MemoryMetadata", MemoryMetadata],
    ["Process", Process],
    ["InboxItem", InboxItem],
    ["Tunables", Tunables],
    ["TunablesOverride", TunablesOverride],
    // One line of an export's NDJSON (the header, then the entries), for checking each line.
    ["ExportLine", z.union([ExportHeader, ExportEntryLine])],
  ];
  const requestSchemas = components(inputs, "input");
  const answerSchemas = components(outputs, "output");
  const clash = Object.keys(requestSchemas).filter((name) => name in answerSchemas);
  if (clash.length > 0) throw new Error(`request and answer schemas share names: ${clash.join(", ")}`);
  return Object.fromEntries(Object.entries({ ...requestSchemas, ...answerSchemas }).sort(([a], [b]) => a.localeCompare(b)));
}

/** The OpenAPI document, as written to docs/openapi.json. */
export function buildOpenApiDocument(): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const op of OPERATIONS) {
    const params = parameters(op);
    const body = requestBody(op);
    (paths[op.path] ??= {})[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      ...(op.public ? { security: [] } : {}),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(body ? { requestBody: body } : {}),
      responses: responses(op),
    };
  }
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Vancetope Memory API",
      version: API_VERSION,
      description:
        "Keeps long LLM chat sessions inside the model's context window. The prose contract, with every behaviour, is docs/api.md; this document is generated from the schemas the routes parse with (`npm run openapi`).",
    },
    servers: [{ url: "http://127.0.0.1:3000", description: "The local runner (npm start); a deployed stage is at its ApiUrl output" }],
    security: [{ bearerAuth: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key: `Authorization: Bearer <key>`; the key decides the tenant." },
      },
      responses: errorResponses(),
      schemas: allComponents(),
    },
  };
}

/** The generated documents, by repository path, exactly as committed (`npm run openapi` writes them). */
export function generatedFiles(): Record<string, string> {
  const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return { "docs/openapi.json": text(buildOpenApiDocument()), "docs/events.schema.json": text(buildEventSchemas()) };
}
