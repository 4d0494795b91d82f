/**
 * The documentation states what the code does, where a reader would act on it: the tunables with
 * their defaults and env variables (docs/configuration.md, "Tunables", the one list), the wire shapes
 * (docs/api.md, each defined once), how the summarizer's provider is chosen (docs/api.md), which
 * sections of the memory block are dynamic (docs/turns.md), and the rate and event figures.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REMOTE_PROVIDERS } from "../../core/adapters/llm/provider-descriptors.js";
import { resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import { CompactionModeName, InboxItem, Memory, MemoryMetadata, MemoryStatus, Message, Process } from "../../core/domain/model.js";
import { CompactionResult } from "../../core/domain/compaction-result.js";
import { DEFAULT_TUNABLES, TUNABLES_ENV, type Tunables } from "../../core/domain/tunables.js";
import { RECALL_HEADING } from "../../core/services/context.js";
import { DEFAULT_MAX_RECORDED } from "../../core/adapters/events/local-bus.js";
import { DEFAULT_TENANT_RATE_LIMIT, MAX_TENANT_RATE_LIMIT } from "../../core/domain/rate-limit.js";

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
const api = read("docs/api.md");
const turns = read("docs/turns.md").replace(/\s+/g, " ");

/** The rows of the table under `## <heading>` in `doc`, as trimmed cells. */
function tableRows(doc: string, heading: string): string[][] {
  const section = doc.split(/\n## /).find((s) => s.startsWith(`${heading}\n`));
  if (!section) throw new Error(`no section "${heading}"`);
  return section
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("|---"))
    .slice(1)
    .map((l) => l.slice(1, -1).split(" | ").map((c) => c.trim()));
}

/**
 * The field names at the top level of the object that opens at `text[open]` (`{ a, b?: x, c: { d } }`
 * gives a, b, c), and where each nested object opens.
 */
function objectFields(text: string, open: number): { names: string[]; nested: Map<string, number> } {
  const names: string[] = [];
  const nested = new Map<string, number>();
  let depth = 0;
  let expectName = false;
  let last = "";
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "{" || c === "[") {
      if (depth === 1 && c === "{" && last) nested.set(last, i);
      depth++;
      expectName = depth === 1;
    } else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1 && c === ",") {
      expectName = true;
    } else if (depth === 1 && expectName && /[A-Za-z]/.test(c)) {
      const name = /^[A-Za-z]+/.exec(text.slice(i))![0];
      names.push(name);
      last = name;
      expectName = false;
      i += name.length - 1;
    }
  }
  return { names, nested };
}

/** The one definition of `` `name`: `{ … }` `` in docs/api.md (the test fails on none or two). */
function definition(name: string): { text: string; open: number } {
  const marker = `\n\`${name}\`: \`{`;
  const first = api.indexOf(marker);
  expect(first, `${name} is defined in docs/api.md`).toBeGreaterThan(-1);
  expect(api.indexOf(marker, first + 1), `${name} is defined once in docs/api.md`).toBe(-1);
  return { text: api, open: first + marker.length - 1 };
}

const sorted = (names: Iterable<string>) => [...names].sort();
/** Stored beside a summary but never answered (`withoutDetail`, core/services/memories.ts). */
const DETAIL_ONLY = ["citations", "droppedUnits", "keepUnits", "ledger"];

describe("docs/configuration.md, Tunables: the one list of tunables", () => {
  const rows = tableRows(read("docs/configuration.md"), "Tunables");
  const byName = new Map(rows.map((r) => [r[0]!.replace(/`/g, ""), r]));

  // Every tunable has a variable; one without a default (retentionDays) is absent from the defaults.
  const names = Object.keys(TUNABLES_ENV) as Array<keyof Tunables>;

  it("has one row per tunable, and no other", () => {
    expect(rows.length).toBe(byName.size);
    expect(sorted(byName.keys())).toEqual(sorted(names));
  });

  it("states each tunable's default and env variable as the code has them", () => {
    for (const name of names) {
      const value = DEFAULT_TUNABLES[name];
      const [, dflt, env] = byName.get(name) ?? [];
      // "60 000", "0 (off)", "0.40", "false", "unset": the number or switch before any remark.
      const documented = dflt?.replace(/\(.*\)/, "").replace(/[\s,]/g, "");
      const stated = documented === "unset" ? undefined : documented === "true" || documented === "false" ? documented === "true" : Number(documented);
      expect(stated, name).toBe(value);
      expect(env, name).toBe(`\`${TUNABLES_ENV[name]}\``);
    }
  });
});

describe("docs/api.md", () => {
  it("lists each route once", () => {
    const routes = tableRows(api, "HTTP API (JSON; times are ISO-8601 UTC; ids are opaque strings)").map((r) => r[0]);
    expect(routes.length).toBeGreaterThan(15);
    expect(routes.filter((r, i) => routes.indexOf(r) !== i)).toEqual([]);
  });

  it("sends PUT /v1/settings to the one list of tunables", () => {
    const row = api.split("\n").find((l) => l.startsWith("| `PUT /v1/settings` |"));
    expect(row).toContain("[configuration.md, \"Tunables\"](configuration.md#tunables)");
  });

  it("defines each wire shape once, with the fields the service answers", () => {
    const shapes = { Message, CompactionResult, InboxItem, Process } as const;
    for (const [name, schema] of Object.entries(shapes)) {
      const { text, open } = definition(name);
      expect(sorted(objectFields(text, open).names), name).toEqual(sorted(Object.keys(schema.shape)));
    }
    const memory = definition("Memory");
    const fields = objectFields(memory.text, memory.open);
    expect(sorted(fields.names)).toEqual(sorted(Object.keys(Memory.shape).filter((k) => !DETAIL_ONLY.includes(k))));
    expect(sorted(objectFields(memory.text, fields.nested.get("metadata")!).names)).toEqual(sorted(Object.keys(MemoryMetadata.shape)));
  });

  it("lists every memory status and compaction mode", () => {
    const statuses = /status: ((?:"[A-Z]+"\|?)+)/.exec(api.slice(definition("Memory").open))![1]!;
    expect(sorted(statuses.split("|").map((s) => s.replace(/"/g, "")))).toEqual(sorted(MemoryStatus.options));
    const modes = /mode: ((?:"[A-Z]+"\|?)+)/.exec(api.slice(definition("CompactionResult").open))![1]!;
    expect(sorted(modes.split("|").map((s) => s.replace(/"/g, "")))).toEqual(sorted(CompactionModeName.options));
  });

  it("sizes recall by its token budget, not by a count of messages", () => {
    const flat = api.replace(/\s+/g, " ");
    expect(flat).toContain("as many as the recall budget holds (`recallMaxTokens`");
    expect(flat).not.toMatch(/up to (three|3) archived messages/);
  });

  it("documents the SOFT wait, its tunable and that 0 turns it off", () => {
    const soft = api.replace(/\s+/g, " ");
    expect(soft).toContain('reason: "below_min_saving"');
    expect(soft).toContain("`softMinFoldTokens: 0` folds whatever SOFT selects");
    expect(soft).toContain("`COMPACTION_SOFT_MIN_FOLD_TOKENS`");
  });

  it("states the provider selection rule the code follows: a base URL alone selects its provider", () => {
    const rule = api.replace(/\s+/g, " ").match(/When `SUMMARIZER` is unset: (.*?)\(deterministic, no network\)/)?.[1];
    // The rule as the provider registry orders it (core/adapters/llm/provider-descriptors.ts).
    const steps = REMOTE_PROVIDERS.map(([name, r]) => `\`${name}\` if \`${r.keyEnv}\` or \`${r.baseUrlEnv}\` is set`);
    expect(rule).toBe(`${steps.join(", else ")}, else \`offline\` `);
    // The same rule, in the code: each key or base URL alone selects its provider, the earlier one wins.
    for (const [name, r] of REMOTE_PROVIDERS) {
      expect(resolveSummarizerConfig({ [r.keyEnv]: "k" }).provider).toBe(name);
      expect(resolveSummarizerConfig({ [r.baseUrlEnv]: "http://127.0.0.1:9/v1" }).provider).toBe(name);
    }
    const [first, second] = REMOTE_PROVIDERS;
    expect(resolveSummarizerConfig({ [first![1].baseUrlEnv]: "http://127.0.0.1:9/v1", [second![1].keyEnv]: "k" }).provider).toBe(first![0]);
    expect(resolveSummarizerConfig({}).provider).toBe("offline");
  });
});

describe("docs/turns.md", () => {
  it("names the recall section as the dynamic one", () => {
    expect(turns).toContain(`\`## ${RECALL_HEADING}\` is dynamic`);
    expect(turns).not.toContain("none yet");
  });
});

describe("the per-tenant rate and the local event list", () => {
  const reliability = read("docs/reliability.md");
  const configuration = read("docs/configuration.md");

  it("states the default rate and its range as the code has them", () => {
    expect(reliability).toContain(`| requests per tenant | ${DEFAULT_TENANT_RATE_LIMIT} per second (a fixed one-second window) |`);
    expect(reliability).toContain(`1-${MAX_TENANT_RATE_LIMIT}, in the deploying shell`);
    expect(configuration).toContain(`\`${DEFAULT_TENANT_RATE_LIMIT}\` in a deployed stage | requests per second per tenant, 0-${MAX_TENANT_RATE_LIMIT}`);
    expect(read("docs/deploy.md")).toContain(`TENANT_RATE_LIMIT=${DEFAULT_TENANT_RATE_LIMIT} `);
  });

  it("states how many events the local runner keeps", () => {
    const kept = DEFAULT_MAX_RECORDED.toLocaleString("en-US");
    expect(api.replace(/\s+/g, " ")).toContain(`from the newest ${kept} it keeps`);
    expect(reliability).toContain(`| the newest ${kept} |`);
  });
});

describe("README.md and docs/configuration.md", () => {
  const readme = read("README.md");

  it("the README gives the two commands and leads to every page of docs/", () => {
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm test");
    const pages = readdirSync(new URL("../../docs/", import.meta.url)).filter((f) => f.endsWith(".md"));
    expect(pages.filter((page) => !readme.includes(`](docs/${page})`))).toEqual([]);
  });

  it("docs/configuration.md's environment table leaves every tunable to the one list, \"Tunables\"", () => {
    const rows = tableRows(read("docs/configuration.md"), "Environment");
    expect(rows.length).toBeGreaterThan(10);
    const named = rows.flatMap((r) => [...r[0]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]));
    expect(named.filter((env) => Object.values(TUNABLES_ENV).includes(env!))).toEqual([]);
  });
});
