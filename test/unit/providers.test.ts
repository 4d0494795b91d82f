/** The provider registry: every provider's entry yields its summarizer, its variables and its key parameter. */
import { describe, expect, it } from "vitest";
import { createSummarizer, resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import { PROVIDER_NAMES, PROVIDERS, REMOTE_PROVIDERS } from "../../core/adapters/llm/provider-descriptors.js";
import { LLM_SECRET_PARAMS } from "../../core/adapters/secrets/llm-secrets.js";
import { contextWindowFor } from "../../core/domain/model-windows.js";
import { HANDLERS } from "../../stacks/handlers.js";
import { functionEnvironment } from "../../stacks/service-function.js";
import { readStageConfig } from "../../stacks/stage.js";

describe("provider registry", () => {
  it.each(PROVIDER_NAMES)("SUMMARIZER=%s builds that provider's summarizer with its default model", (name) => {
    // A provider fold uses its wire provider's key.
    const wire: string = (PROVIDERS[name] as { wire?: string }).wire ?? name;
    const remote = REMOTE_PROVIDERS.find(([n]) => n === wire)?.[1];
    const env = { SUMMARIZER: name, ...(remote ? { [remote.keyEnv]: "sk-test" } : {}) };
    const summarizer = createSummarizer(resolveSummarizerConfig(env));
    expect([summarizer.provider, summarizer.model]).toEqual([name, PROVIDERS[name].defaultModel]);
  });

  it.each(REMOTE_PROVIDERS.map(([name, r]) => [name, r] as const))("%s is chosen by its key or its base URL alone", (name, r) => {
    expect(resolveSummarizerConfig({ [r.keyEnv]: "sk-test" }).provider).toBe(name);
    expect(resolveSummarizerConfig({ [r.baseUrlEnv]: "http://localhost:11434/v1" })).toMatchObject({
      provider: name,
      baseURL: "http://localhost:11434/v1",
    });
  });

  it.each(REMOTE_PROVIDERS.map(([name]) => name))("%s's default model has a known context window", (name) => {
    const model = PROVIDERS[name].defaultModel;
    expect(contextWindowFor(model), model).toBeGreaterThan(0);
  });

  it("gives each remote provider a key parameter the loader reads and the summarizing functions name", () => {
    expect(LLM_SECRET_PARAMS).toEqual(Object.fromEntries(REMOTE_PROVIDERS.map(([, r]) => [r.keyParamEnv, r.keyEnv])));
    const config = readStageConfig("team-a", { VANCETOPE_CURSOR_SECRET: "k".repeat(40), ...Object.fromEntries(REMOTE_PROVIDERS.map(([name, r]) => [r.baseUrlEnv, `https://${name}.internal/v1`])) });
    const env = functionEnvironment(HANDLERS.summarizingRoutes, { config, tableName: "t" });
    for (const [name, r] of REMOTE_PROVIDERS) {
      expect(env[r.keyParamEnv]).toBe(`/vancetope-memory/team-a/${r.keyParameter}`);
      expect(env[r.baseUrlEnv]).toBe(`https://${name}.internal/v1`);
    }
  });

  it("refuses a SUMMARIZER the registry does not know, at deploy and at start", () => {
    expect(() => readStageConfig("team-a", { VANCETOPE_CURSOR_SECRET: "k".repeat(40), SUMMARIZER: "mystery" })).toThrow(/SUMMARIZER must be one of offline, /);
    expect(() => resolveSummarizerConfig({ SUMMARIZER: "mystery" })).toThrow(/SUMMARIZER/);
  });
});
