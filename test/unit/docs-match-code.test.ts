/**
 * The documentation states what the code does, where a reader would act on it: the settings a
 * PUT /v1/settings body may carry (docs/api.md), how the summarizer's provider is chosen
 * (docs/api.md), and which sections of the memory block are dynamic (docs/turns.md).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REMOTE_PROVIDERS } from "../../core/adapters/llm/provider-descriptors.js";
import { resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { RECALL_HEADING } from "../../core/services/context.js";
import { DEFAULT_MAX_RECORDED } from "../../core/adapters/events/local-bus.js";
import { DEFAULT_TENANT_RATE_LIMIT, MAX_TENANT_RATE_LIMIT } from "../../core/domain/rate-limit.js";

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
const api = read("docs/api.md");
const turns = read("docs/turns.md").replace(/\s+/g, " ");

describe("docs/api.md", () => {
  it("lists every tunable in the PUT /v1/settings body", () => {
    const row = api.split("\n").find((l) => l.startsWith("| `PUT /v1/settings` |"));
    expect(row).toBeDefined();
    const body = row!.split("|")[2]!;
    const documented = new Set([...body.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1]));
    for (const tunable of Object.keys(DEFAULT_TUNABLES)) expect(documented, tunable).toContain(tunable);
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
  const readme = read("README.md");

  it("states the default rate and its range as the code has them", () => {
    expect(reliability).toContain(`| requests per tenant | ${DEFAULT_TENANT_RATE_LIMIT} per second (a fixed one-second window) |`);
    expect(reliability).toContain(`1-${MAX_TENANT_RATE_LIMIT}, in the deploying shell`);
    expect(readme).toContain(`\`${DEFAULT_TENANT_RATE_LIMIT}\` in a deployed stage | requests per second per tenant, 0-${MAX_TENANT_RATE_LIMIT}`);
    expect(read("docs/deploy.md")).toContain(`TENANT_RATE_LIMIT=${DEFAULT_TENANT_RATE_LIMIT} `);
  });

  it("states how many events the local runner keeps", () => {
    const kept = DEFAULT_MAX_RECORDED.toLocaleString("en-US");
    expect(api.replace(/\s+/g, " ")).toContain(`from the newest ${kept} it keeps`);
    expect(reliability).toContain(`| the newest ${kept} |`);
  });
});
