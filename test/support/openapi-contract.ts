/**
 * Checks an HTTP answer against docs/openapi.json: the (method, path template, status) must be
 * described, its media type listed, a JSON body (or each NDJSON line) valid against its schema
 * (JSON Schema 2020-12) and its required headers present. Each schema is compiled once per process, on first use.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import * as ajvFormats from "ajv-formats";

type Json = Record<string, any>;

export interface Answer {
  method: string;
  /** The request's path, with or without its query string. */
  path: string;
  status: number;
  headers: Headers;
  body: string;
}

export interface ContractChecker {
  /** What the document does not describe of this answer; empty when it describes all of it. */
  check(answer: Answer): string[];
}

const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options"]);
// OpenAPI's own annotations inside schemas; anything else unknown stays an error (ajv's strict mode).
const OPENAPI_KEYWORDS = ["example", "discriminator", "xml", "externalDocs"];
const DOC_ID = "openapi.json";
const DOC_PARTS = ["paths", "components"];
/** The document's not-found answer (components.responses), which also answers any unknown route. */
const NOT_FOUND = "Error404";
const PAGE_MEDIA = new Set(["text/html", "text/css", "text/javascript", "application/javascript"]);

interface Template {
  template: string;
  pattern: RegExp;
  literals: number;
}

const escapePointer = (part: string) => part.replace(/~/g, "~0").replace(/\//g, "~1");

function templatesOf(doc: Json): Template[] {
  return Object.keys(doc.paths ?? {})
    .map((template) => {
      const parts = template.split("/");
      const source = parts.map((p) => (/^\{[^}]+\}$/.test(p) ? "[^/]+" : p.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("/");
      return { template, pattern: new RegExp(`^${source}$`), literals: parts.filter((p) => !p.startsWith("{")).length };
    })
    // `/a/{id}` and `/a/b` both match `/a/b`: the one with more literal segments is meant.
    .sort((a, b) => b.literals - a.literals);
}

/** A local `#/...` reference resolved to its target and the target's JSON pointer. */
function resolve(doc: Json, node: Json, pointer: string): { node: Json; pointer: string } {
  let seen = 0;
  while (typeof node.$ref === "string") {
    if (!node.$ref.startsWith("#/") || ++seen > 10) throw new Error(`unresolvable $ref ${node.$ref}`);
    pointer = node.$ref.slice(1);
    node = pointer
      .split("/")
      .slice(1)
      .reduce((at: any, part) => at?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
    if (node === undefined) throw new Error(`dangling $ref ${pointer}`);
  }
  return { node, pointer };
}

function mediaTypeOf(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** ajv's errors, each with the field it is about (ajv leaves an unexpected property's name in params). */
function describeErrors(errors: ErrorObject[]): string {
  return errors
    .map((e) => {
      const extra = e.params.additionalProperty ?? e.params.unevaluatedProperty ?? e.params.allowedValues;
      return `body${e.instancePath} ${e.message}${extra ? ` (${JSON.stringify(extra).slice(0, 300)})` : ""}`;
    })
    .join("; ");
}

/** What is wrong with the lines of an NDJSON body: each a JSON value `validate` accepts, each ended by a line feed. */
function lineProblems(where: string, body: string, validate: ValidateFunction): string[] {
  const lines = body.split("\n");
  const problems = lines.at(-1) === "" ? [] : [`${where}: the last line has no line feed`];
  lines.slice(0, -1).forEach((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`${where}: line ${i + 1} is not JSON: ${JSON.stringify(line.slice(0, 120))}`);
      return;
    }
    if (!validate(value)) problems.push(`${where}: line ${i + 1} does not match the document: ${describeErrors(validate.errors ?? [])}; line ${line.slice(0, 300)}`);
  });
  return problems;
}

const isJsonMedia = (media: string) => media === "application/json" || media.endsWith("+json");

/** `ajv` with the standard formats (date-time, uri, ...) that zod's JSON Schema output names. */
function formatted(ajv: Ajv2020): Ajv2020 {
  (ajvFormats.default as unknown as (a: Ajv2020) => void)(ajv);
  return ajv;
}

export function createContractChecker(doc: Json): ContractChecker {
  const ajv = formatted(new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false }));
  ajv.addVocabulary([...OPENAPI_KEYWORDS, ...DOC_PARTS]);
  // The document's own parts become annotations, so refs like `#/components/schemas/X` resolve
  // inside it without its root being taken for a schema.
  ajv.addSchema(Object.fromEntries(DOC_PARTS.map((k) => [k, doc[k]])), DOC_ID);
  const templates = templatesOf(doc);
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string) => {
    let validate = validators.get(pointer);
    if (!validate) validators.set(pointer, (validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` })));
    return validate;
  };

  return {
    check({ method, path, status, headers, body }) {
      const route = `${method.toUpperCase()} ${path}`;
      const pathname = path.split("?")[0]!;
      const template = templates.find((t) => t.pattern.test(pathname))?.template;
      const operation = template && METHODS.has(method.toLowerCase()) ? doc.paths[template][method.toLowerCase()] : undefined;
      let where: string;
      let response: { node: Json; pointer: string };
      if (!operation) {
        // The local runner's pages (the inspector and its files, /reference; local/inspector-routes.ts)
        // are not the API's answers. Anything else no operation describes is the app's catch-all
        // (core/adapters/http/app.ts): a 404 in the document's not-found shape, never another status.
        if (method.toUpperCase() === "GET" && status === 200 && PAGE_MEDIA.has(mediaTypeOf(headers))) return [];
        where = `${route} -> ${status} (no operation of the document)`;
        if (status !== 404 || !doc.components?.responses?.[NOT_FOUND]) return [`${where}: only a 404 is expected`];
        response = resolve(doc, doc.components.responses[NOT_FOUND], `/components/responses/${NOT_FOUND}`);
      } else {
        const opPointer = `/paths/${escapePointer(template!)}/${method.toLowerCase()}/responses`;
        const key = [String(status), `${String(status)[0]}XX`, "default"].find((k) => operation.responses?.[k] !== undefined);
        where = `${method.toUpperCase()} ${template} -> ${status}`;
        if (!key) return [`${where}: status not described (described: ${Object.keys(operation.responses ?? {}).join(", ")})`];
        response = resolve(doc, operation.responses[key], `${opPointer}/${escapePointer(key)}`);
      }
      const problems: string[] = [];
      for (const [name, header] of Object.entries<Json>(response.node.headers ?? {}))
        if (header.required && !headers.has(name)) problems.push(`${where}: required header ${name} missing`);
      const content: Json | undefined = response.node.content;
      if (!content) {
        if (body !== "") problems.push(`${where}: the document describes no body, got ${JSON.stringify(body.slice(0, 120))}`);
        return problems;
      }
      const media = mediaTypeOf(headers);
      const described = [media, `${media.split("/")[0]}/*`, "*/*"].find((m) => content[m] !== undefined);
      if (!described) return [...problems, `${where}: media type "${media}" not described (described: ${Object.keys(content).join(", ")})`];
      const schema: Json | undefined = content[described].schema;
      if (schema === undefined) return problems;
      const schemaPointer = `${response.pointer}/content/${escapePointer(described)}/schema`;
      // NDJSON is a string whose `contentSchema` each line follows (OpenAPI 3.1 / JSON Schema 2020-12).
      if (media === "application/x-ndjson" && schema.contentSchema) return [...problems, ...lineProblems(where, body, validatorAt(`${schemaPointer}/contentSchema`))];
      if (!isJsonMedia(media)) return problems;
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        return [...problems, `${where}: body is not JSON: ${JSON.stringify(body.slice(0, 120))}`];
      }
      const validate = validatorAt(schemaPointer);
      if (!validate(value))
        problems.push(`${where}: body does not match the document: ${describeErrors(validate.errors ?? [])}; body ${JSON.stringify(value).slice(0, 400)}`);
      return problems;
    },
  };
}

const readDoc = (name: string) => JSON.parse(readFileSync(new URL(`../../docs/${name}`, import.meta.url), "utf8"));

/**
 * The events `GET /local/events` lists, each as an EventBridge event against the catalogue
 * (docs/events.schema.json): the document describes an event's detail only as an object.
 */
function eventProblems(answer: Answer, validate: ValidateFunction): string[] {
  const { items } = JSON.parse(answer.body) as { items: { source: string; detailType: string; detail: unknown }[] };
  return items.flatMap((e, i) =>
    validate({ source: e.source, "detail-type": e.detailType, detail: e.detail })
      ? []
      : [`GET /local/events -> 200: item ${i} (${e.detailType}) does not match docs/events.schema.json: ${describeErrors(validate.errors ?? [])}`],
  );
}

let shared: ContractChecker | undefined;

/** The checker of the repository's docs/openapi.json and its event catalogue, built once per process. */
export function documentChecker(): ContractChecker {
  if (shared) return shared;
  const api = createContractChecker(readDoc("openapi.json"));
  let events: ValidateFunction | undefined;
  return (shared = {
    check(answer) {
      const problems = api.check(answer);
      if (problems.length > 0 || answer.method.toUpperCase() !== "GET" || answer.status !== 200 || answer.path.split("?")[0] !== "/local/events") return problems;
      events ??= formatted(new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false })).compile(readDoc("events.schema.json"));
      return eventProblems(answer, events);
    },
  });
}

/** An answer the document does not describe: thrown to the caller that made the request. */
export class ContractViolation extends Error {
  override name = "ContractViolation";
}

/**
 * `inner` with every answer from an origin that `checkerOf` gives a checker for checked; an answer
 * the document does not describe rejects with a ContractViolation (also handed to `onViolation`,
 * so one that a caller swallows is still seen).
 */
export function checkedFetch(
  inner: typeof fetch,
  options: { checkerOf: (origin: string) => ContractChecker | undefined; onViolation?: (v: ContractViolation) => void },
): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    // Parsed as fetch sends it: `..` segments resolved, so the path is the one the service saw.
    const url = new URL(input instanceof Request ? input.url : String(input));
    const checker = options.checkerOf(url.origin);
    if (!checker) return res;
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const problems = checker.check({ method, path: url.pathname + url.search, status: res.status, headers: res.headers, body: await res.clone().text() });
    if (problems.length === 0) return res;
    const violation = new ContractViolation(problems.join("\n"));
    options.onViolation?.(violation);
    throw violation;
  };
}
