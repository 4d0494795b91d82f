/**
 * A small evaluator of the CloudWatch Logs Insights subset docs/operations.md uses, over JSON log
 * lines: `fields`, `filter` (`=`, `!=`, numeric comparisons, `like /re/`, `ispresent(f)`, `not`,
 * `and`, `or`; no parentheses), `stats <fn>(…) [as x], … [by f, …]`, `sort`, `limit`, `display`.
 * Anything else throws, so a query the evaluator does not understand cannot pass unchecked.
 */

export type LogLine = { raw: string; json: Record<string, unknown> };

export interface Query {
  /** The filters, in order: a line must pass each. */
  filters: Array<(line: LogLine) => boolean>;
  /** Fields the query shows, counts, groups or sorts by (without `@timestamp` and `@message`). */
  fields: string[];
}

const AGGREGATES = new Set(["count", "count_distinct", "sum", "avg", "min", "max", "pct", "stddev"]);

/** Replaces each "string" and each /regex/ after `like` by a placeholder, so splitting on `|`, `,`, `and` cannot cut one. */
function mask(text: string): { masked: string; literals: string[] } {
  const literals: string[] = [];
  const masked = text
    .replace(/\blike\s+\/((?:\\.|[^/\\])*)\//g, (_, re: string) => `like \u0000${literals.push(`/${re}/`) - 1}\u0000`)
    .replace(/"((?:\\.|[^"\\])*)"/g, (m) => `\u0000${literals.push(m) - 1}\u0000`);
  return { masked, literals };
}

const unmask = (text: string, literals: string[]) => text.replace(/\u0000(\d+)\u0000/g, (_, i: string) => literals[Number(i)]!);

/** A field's value on a line: `@message` is the raw line, `a.b` reads into nested JSON. */
export function valueOf(line: LogLine, field: string): unknown {
  if (field === "@message") return line.raw;
  if (field === "@timestamp") return line.json.timestamp;
  if (field.startsWith("@")) throw new Error(`${field} is not on the service's lines`);
  if (Object.hasOwn(line.json, field)) return line.json[field];
  return field.split(".").reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), line.json);
}

function term(text: string, literals: string[]): { test: (line: LogLine) => boolean; field: string } {
  const t = text.trim();
  const not = /^not\s+(.+)$/.exec(t);
  if (not) {
    const inner = term(not[1]!, literals);
    return { test: (l) => !inner.test(l), field: inner.field };
  }
  const present = /^ispresent\(([\w.@]+)\)$/.exec(t);
  if (present) return { test: (l) => valueOf(l, present[1]!) !== undefined, field: present[1]! };
  const like = /^([\w.@]+)\s+like\s+(.+)$/.exec(t);
  if (like) {
    const literal = unmask(like[2]!.trim(), literals);
    if (!literal.startsWith("/") || !literal.endsWith("/")) throw new Error(`like needs a /regex/: ${t}`);
    const re = new RegExp(literal.slice(1, -1));
    return { test: (l) => ((v) => v !== undefined && re.test(String(v)))(valueOf(l, like[1]!)), field: like[1]! };
  }
  const compare = /^([\w.@]+)\s*(=|!=|>=|<=|>|<)\s*(.+)$/.exec(t);
  if (compare) {
    const [, field, op, rawValue] = compare as unknown as [string, string, string, string];
    const literal = unmask(rawValue.trim(), literals);
    const expected: string | number = literal.startsWith('"') ? (JSON.parse(literal) as string) : Number(literal);
    if (typeof expected === "number" && Number.isNaN(expected)) throw new Error(`not a string or a number: ${literal}`);
    const test = (l: LogLine) => {
      const v = valueOf(l, field);
      if (v === undefined) return false;
      const actual = typeof expected === "number" ? Number(v) : String(v);
      switch (op) {
        case "=":
          return actual === expected;
        case "!=":
          return actual !== expected;
        case ">":
          return actual > expected;
        case "<":
          return actual < expected;
        case ">=":
          return actual >= expected;
        default:
          return actual <= expected;
      }
    };
    return { test, field };
  }
  throw new Error(`unsupported filter term: ${t}`);
}

function filterOf(expression: string, literals: string[]): { test: (line: LogLine) => boolean; fields: string[] } {
  if (/[()]/.test(expression.replace(/ispresent\([\w.@]+\)/g, ""))) throw new Error(`parentheses are not supported: ${expression}`);
  const anyOf = expression.split(/\s+or\s+/).map((alternative) => alternative.split(/\s+and\s+/).map((t) => term(t, literals)));
  return {
    test: (line) => anyOf.some((all) => all.every((t) => t.test(line))),
    fields: anyOf.flat().map((t) => t.field),
  };
}

const fieldList = (text: string) =>
  text
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);

/** The fields a `stats` command reads: its functions' arguments and its `by` fields. */
function statsFields(text: string): string[] {
  const [aggregates, by] = text.split(/\s+by\s+/) as [string, string | undefined];
  const fields: string[] = [];
  for (const part of aggregates.split(/,(?![^(]*\))/)) {
    const call = /^\s*(\w+)\(([^)]*)\)(?:\s+as\s+\w+)?\s*$/.exec(part);
    if (!call || !AGGREGATES.has(call[1]!)) throw new Error(`unsupported stats function: ${part.trim()}`);
    const arg = call[2]!.split(",")[0]!.trim();
    if (arg !== "*") fields.push(arg);
  }
  return [...fields, ...(by ? fieldList(by) : [])];
}

/** Parses a query of the supported subset. */
export function parseQuery(query: string): Query {
  const { masked, literals } = mask(query);
  const filters: Query["filters"] = [];
  const fields: string[] = [];
  for (const raw of masked.split("|").map((c) => c.trim()).filter(Boolean)) {
    const [, command, rest = ""] = /^(\w+)\s*([\s\S]*)$/.exec(raw) ?? [];
    switch (command) {
      case "fields":
      case "display":
        fields.push(...fieldList(rest));
        break;
      case "filter": {
        const f = filterOf(rest, literals);
        filters.push(f.test);
        fields.push(...f.fields);
        break;
      }
      case "stats":
        fields.push(...statsFields(rest));
        break;
      case "sort":
        fields.push(rest.replace(/\s+(asc|desc)$/, "").trim());
        break;
      case "limit":
        if (!/^\d+$/.test(rest)) throw new Error(`limit needs a number: ${raw}`);
        break;
      default:
        throw new Error(`unsupported command: ${unmask(raw, literals)}`);
    }
  }
  return { filters, fields: [...new Set(fields)].filter((f) => f !== "@timestamp" && f !== "@message") };
}

/** The lines a query's filters let through. */
export function matching(query: Query, lines: LogLine[]): LogLine[] {
  return lines.filter((line) => query.filters.every((f) => f(line)));
}

/** Each fenced block of `markdown` whose info string is `lang`. */
export function fencedBlocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1]!.trim());
}
