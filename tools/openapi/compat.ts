/**
 * What a new OpenAPI document breaks for a client of an older one: a path or an operation gone, a
 * parameter gone, a field (a property of a request or answer body, at any depth) gone, or an enum
 * value gone. A rename is a removal plus an addition; additions break nothing.
 * test/unit/openapi-compat.test.ts runs it against the committed snapshot of the current major
 * version (docs/api.md, "OpenAPI document").
 */
type Json = Record<string, unknown>;

const METHODS = ["get", "put", "post", "patch", "delete", "head", "options"] as const;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Follows a local `$ref` (`#/components/...`) inside its own document. */
function resolve(doc: Json, schema: unknown): Json {
  let at: unknown = schema;
  for (let hops = 0; isObject(at) && typeof at.$ref === "string" && hops < 32; hops++) {
    at = (at.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce<unknown>((node, key) => (isObject(node) ? node[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), doc);
  }
  return isObject(at) ? at : {};
}

/** Every enum or const value a schema allows at its top level. */
function enumValues(schema: Json): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  if ("const" in schema) return [schema.const];
  return undefined;
}

/**
 * Compares one schema of the old document with its counterpart in the new one, depth first,
 * reporting each removed property and enum value under `where`. Alternatives (anyOf, oneOf,
 * allOf) are matched by position, the way the generator writes them.
 */
function compareSchemas(before: Json, after: Json, where: string, docs: { old: Json; now: Json }, seen: Set<string>, out: string[]) {
  const a = resolve(docs.old, before);
  const b = resolve(docs.now, after);
  const key = `${JSON.stringify(before)}|${JSON.stringify(after)}`;
  if (seen.has(key)) return;
  seen.add(key);
  const oldEnum = enumValues(a);
  const newEnum = enumValues(b);
  if (oldEnum && newEnum) {
    for (const value of oldEnum) if (!newEnum.some((v) => JSON.stringify(v) === JSON.stringify(value))) out.push(`enum value removed: ${where} ${JSON.stringify(value)}`);
  }
  const oldProps = isObject(a.properties) ? a.properties : {};
  const newProps = isObject(b.properties) ? b.properties : {};
  for (const [name, schema] of Object.entries(oldProps)) {
    if (!(name in newProps)) out.push(`field removed: ${where}.${name}`);
    else compareSchemas(schema as Json, newProps[name] as Json, `${where}.${name}`, docs, seen, out);
  }
  if (isObject(a.items) && isObject(b.items)) compareSchemas(a.items, b.items, `${where}[]`, docs, seen, out);
  if (isObject(a.additionalProperties) && isObject(b.additionalProperties)) {
    compareSchemas(a.additionalProperties, b.additionalProperties, `${where}{}`, docs, seen, out);
  }
  for (const combinator of ["anyOf", "oneOf", "allOf"] as const) {
    const olds = Array.isArray(a[combinator]) ? (a[combinator] as Json[]) : [];
    const news = Array.isArray(b[combinator]) ? (b[combinator] as Json[]) : [];
    olds.forEach((s, i) => {
      if (news[i]) compareSchemas(s, news[i], `${where}|${i}`, docs, seen, out);
    });
  }
}

const contentSchemas = (doc: Json, holder: unknown): Record<string, Json> => {
  const content = resolve(doc, holder).content;
  return isObject(content) ? Object.fromEntries(Object.entries(content).map(([media, m]) => [media, (isObject(m) ? m.schema : {}) as Json])) : {};
};

/** The breaking changes from `old` to `now`, one line each; empty when a client of `old` still works. */
export function breakingChanges(old: Json, now: Json): string[] {
  const out: string[] = [];
  const docs = { old, now };
  const seen = new Set<string>();
  const oldPaths = (old.paths ?? {}) as Record<string, Json>;
  const newPaths = (now.paths ?? {}) as Record<string, Json>;
  for (const [path, item] of Object.entries(oldPaths)) {
    for (const method of METHODS) {
      const before = item[method] as Json | undefined;
      if (!before) continue;
      const after = newPaths[path]?.[method] as Json | undefined;
      const op = `${method.toUpperCase()} ${path}`;
      if (!after) {
        out.push(`operation removed: ${op}`);
        continue;
      }
      const params = (o: Json, doc: Json) => ((o.parameters ?? []) as unknown[]).map((p) => resolve(doc, p));
      for (const p of params(before, old)) {
        const match = params(after, now).find((q) => q.name === p.name && q.in === p.in);
        if (!match) out.push(`parameter removed: ${op} ${p.in} ${p.name}`);
        else compareSchemas((p.schema ?? {}) as Json, (match.schema ?? {}) as Json, `${op} ${p.in} ${p.name}`, docs, seen, out);
      }
      const bodies = [contentSchemas(old, before.requestBody), contentSchemas(now, after.requestBody)] as const;
      for (const [media, schema] of Object.entries(bodies[0])) {
        if (bodies[1][media]) compareSchemas(schema, bodies[1][media], `${op} body`, docs, seen, out);
        else out.push(`request media type removed: ${op} ${media}`);
      }
      const oldResponses = (before.responses ?? {}) as Json;
      const newResponses = (after.responses ?? {}) as Json;
      for (const [status, response] of Object.entries(oldResponses)) {
        if (!(status in newResponses)) {
          out.push(`response removed: ${op} ${status}`);
          continue;
        }
        const [was, is] = [contentSchemas(old, response), contentSchemas(now, newResponses[status])];
        for (const [media, schema] of Object.entries(was)) {
          if (is[media]) compareSchemas(schema, is[media], `${op} ${status}`, docs, seen, out);
          else out.push(`response media type removed: ${op} ${status} ${media}`);
        }
      }
    }
  }
  return out;
}

/** The major version of an `info.version` such as `1.4.0`. */
export const majorOf = (doc: Json) => Number(String((doc.info as Json | undefined)?.version ?? "").split(".")[0]);
