/**
 * The documentation states what the code does, where a reader would act on it: the settings a
 * PUT /v1/settings body may carry (docs/api.md), how the summarizer's provider is chosen
 * (docs/api.md), and which sections of the memory block are dynamic (docs/turns.md).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
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
    expect(rule).toBe(
      "`openai` if `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set, else `anthropic` if `ANTHROPIC_API_KEY` or `ANTHROPIC_BASE_URL` is set, else `offline` ",
    );
    // The same rule, in the code.
    expect(resolveSummarizerConfig({ OPENAI_API_KEY: "k" }).provider).toBe("openai");
    expect(resolveSummarizerConfig({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }).provider).toBe("openai");
    expect(resolveSummarizerConfig({ ANTHROPIC_API_KEY: "k" }).provider).toBe("anthropic");
    expect(resolveSummarizerConfig({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }).provider).toBe("anthropic");
    expect(resolveSummarizerConfig({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", ANTHROPIC_API_KEY: "k" }).provider).toBe("openai");
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
