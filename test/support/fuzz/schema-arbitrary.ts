/**
 * fast-check arbitraries derived from the request schemas (core/adapters/http/schemas.ts): zod 4 turns
 * each schema into JSON Schema (`z.toJSONSchema`), and this module turns that into arbitraries of
 * values that pass the schema's shape (`validOf`) and of values that break it in one place each
 * (`invalidOf`: a wrong type, a missing required field, an unknown key, a string past its limit
 * or outside its pattern, a number out of range). Cross-field refinements are not in JSON Schema,
 * so a "valid" value may still be refused: the fuzz test only asks for no 5xx and no write.
 */
import fc from "fast-check";
import * as z from "../../../core/domain/zod.js";

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  anyOf?: JsonSchema[];
  default?: unknown;
}

/** The input-side JSON Schema of a zod schema (refinements and transforms left out). */
export function jsonSchemaOf(schema: z.core.$ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
}

/** Strings that have broken services before: traversal, key separators, NUL, lone surrogates, RTL, zero-width, injection. */
export const HOSTILE_STRINGS: readonly string[] = [
  "../../etc/passwd",
  "..%2F..%2Fsecret",
  "a#b",
  "T#other-tenant#P#p1",
  "META",
  "M#",
  "nul\u0000byte",
  "\u0000",
  "lone \ud800 high",
  "\udfff\ud800 reversed pair",
  "\u202Eevil.exe\u202C",
  "zero\u200B\u200C\u200Dwidth\uFEFF",
  "👩‍👩‍👧‍👦🧨 مرحبا עברית",
  "\r\nX-Injected: 1",
  "' OR '1'='1",
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "A".repeat(129),
  "x".repeat(5000),
  " ",
  "",
];

export const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 20 }).map((s) => `${s}\ud800`),
);

const INT_LIMIT = 2 ** 31 - 1;

function stringOf(s: JsonSchema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 60, 300);
  if (s.format === "date-time") {
    return fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (s.pattern) {
    const re = new RegExp(s.pattern, "u");
    return fc.stringMatching(re).filter((x) => x.length >= min && x.length <= max);
  }
  return fc.string({ minLength: min, maxLength: max, unit: fc.constantFrom("grapheme", "binary") as never }).filter((x) => x.length >= min);
}

function numberOf(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum : -1e6);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum : 1e6);
  if (integer) {
    const a = Math.max(lo, -INT_LIMIT);
    const b = Math.min(hi, INT_LIMIT);
    return fc.oneof(fc.integer({ min: a, max: b }), fc.constantFrom(lo, hi).filter((n) => Number.isSafeInteger(n)));
  }
  return fc.double({
    min: lo,
    max: hi,
    minExcluded: s.exclusiveMinimum !== undefined,
    maxExcluded: s.exclusiveMaximum !== undefined,
    noNaN: true,
    noDefaultInfinity: true,
  });
}

/** Values of the schema's shape (recursively), optional keys present or not. */
export function validOf(s: JsonSchema): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.anyOf) return fc.oneof(...s.anyOf.map(validOf));
  switch (s.type) {
    case "string":
      return stringOf(s);
    case "integer":
      return numberOf(s, true);
    case "number":
      return numberOf(s, false);
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(s.items ? validOf(s.items) : fc.anything(), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
    case "object": {
      const props = s.properties ?? {};
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, validOf(v)]));
      return fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in props) as never[] });
    }
    default:
      return fc.jsonValue();
  }
}

/** One thing wrong with a value of `s`, possibly deep inside it. */
export function invalidOf(s: JsonSchema): fc.Arbitrary<unknown> {
  const wrongType = fc.oneof(
    fc.constantFrom<unknown>(null, true, 0, -1, 1.5, "", "text", [], {}, [1, "a"], { nested: { deep: [null] } }),
    hostileString,
  );
  const options: Array<fc.Arbitrary<unknown>> = [wrongType];
  if (s.enum) options.push(hostileString, fc.string({ maxLength: 10 }));
  if (s.type === "string") {
    if (s.maxLength !== undefined) options.push(fc.constant("y".repeat(s.maxLength + 1)));
    if ((s.minLength ?? 0) > 0) options.push(fc.constant(""));
    if (s.pattern || s.format) options.push(hostileString);
  }
  if (s.type === "integer" || s.type === "number") {
    const lo = s.minimum ?? s.exclusiveMinimum;
    const hi = s.maximum ?? s.exclusiveMaximum;
    options.push(fc.constantFrom<unknown>(1e308, -1e308, -0, 0.5, "1", Number.MAX_SAFE_INTEGER + 2));
    if (lo !== undefined) options.push(fc.constant(s.exclusiveMinimum !== undefined ? lo : lo - 1));
    if (hi !== undefined) options.push(fc.constant(s.exclusiveMaximum !== undefined ? hi : hi + 1));
  }
  if (s.type === "array") {
    if (s.maxItems !== undefined && s.maxItems <= 200 && s.items) {
      options.push(fc.array(validOf(s.items), { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 }));
    }
    if (s.items) options.push(fc.tuple(invalidOf(s.items)).map(([x]) => [x]));
  }
  if (s.type === "object") {
    const props = s.properties ?? {};
    const keys = Object.keys(props);
    const base = validOf({ ...s, required: keys }) as fc.Arbitrary<Record<string, unknown>>;
    if (keys.length > 0) {
      // One property replaced by an invalid value of its own schema.
      options.push(
        fc.constantFrom(...keys).chain((k) => fc.tuple(base, invalidOf(props[k]!)).map(([v, bad]) => ({ ...v, [k]: bad }))),
      );
    }
    for (const k of s.required ?? []) options.push(base.map(({ [k]: _drop, ...rest }) => rest));
    if (s.additionalProperties === false) {
      options.push(fc.tuple(base, fc.constantFrom("bogus", "__proto__", "constructor", "tenantId", "pk")).map(([v, k]) => ({ ...v, [k]: "x" })));
    }
  }
  return fc.oneof(...options);
}

/** Values of the schema's shape that also pass its refinements (zod decides). */
export function acceptedOf(schema: z.core.$ZodType): fc.Arbitrary<unknown> {
  return validOf(jsonSchemaOf(schema)).filter((v) => z.safeParse(schema, v).success);
}

/** Bodies for an endpoint: accepted by the schema, shaped like it, broken in one place, or not JSON at all. */
export function bodyOf(schema: z.core.$ZodType): fc.Arbitrary<{ json: unknown } | { raw: string }> {
  const js = jsonSchemaOf(schema);
  return fc.oneof(
    { weight: 4, arbitrary: acceptedOf(schema).map((json) => ({ json })) },
    { weight: 2, arbitrary: validOf(js).map((json) => ({ json })) },
    { weight: 4, arbitrary: invalidOf(js).map((json) => ({ json })) },
    { weight: 1, arbitrary: fc.jsonValue().map((json) => ({ json })) },
    { weight: 1, arbitrary: MALFORMED_JSON.map((raw) => ({ raw })) },
  );
}

export const MALFORMED_JSON: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    "{",
    "}",
    "{'role':'USER'}",
    '{"role":"USER",}',
    '{"a":1}garbage',
    "\uFEFF{}",
    "NaN",
    "1e999999",
    '{"content":"\\ud800"}',
    '{"__proto__":{"polluted":true}}',
    '{"projectId":"a","projectId":{"$gt":""}}',
    "[".repeat(5000),
    '{"a":'.repeat(3000),
  ),
  fc.string({ maxLength: 50 }),
);
