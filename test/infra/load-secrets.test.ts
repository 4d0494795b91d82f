/**
 * The LLM key loader the summarizing functions run at cold start: SSM SecureStrings by name,
 * decrypted (Powertools Parameters over the real SSM client), once per container, tolerant of a
 * provider that is not configured.
 */
import { ParameterNotFound, SSMClient, type GetParameterCommandInput } from "@aws-sdk/client-ssm";
import { describe, expect, it } from "vitest";
import { loadLlmSecrets } from "../../core/adapters/secrets/llm-secrets.js";
import { createSummarizingDeps } from "../../core/composition/summarizing-deps.js";
import { createMemoryLog } from "../support/memory-log.js";

/** A real SSM client whose requests are answered by a middleware, before any network. */
function fakeSsm(values: Record<string, string | Error>) {
  const calls: Array<{ Name?: string; WithDecryption?: boolean }> = [];
  const client = new SSMClient({ region: "eu-west-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } });
  client.middlewareStack.add(
    () => async (args) => {
      const input = args.input as GetParameterCommandInput;
      calls.push(input);
      const v = values[input.Name!];
      if (v instanceof Error) throw v;
      if (v === undefined) throw new ParameterNotFound({ message: "not found", $metadata: {} });
      return { output: { Parameter: { Value: v }, $metadata: {} }, response: {} };
    },
    { step: "initialize", name: "answerFromTestValues" },
  );
  return { client, calls };
}

const ignore = () => {};
const params = { OPENAI_API_KEY_PARAM: "/vancetope-memory/team-a/openai-api-key", ANTHROPIC_API_KEY_PARAM: "/vancetope-memory/team-a/anthropic-api-key" };

describe("loadLlmSecrets", () => {
  it("does nothing (and calls nothing) without parameter names", async () => {
    const { client, calls } = fakeSsm({});
    const env: Record<string, string | undefined> = {};
    await loadLlmSecrets(env, { client, warn: ignore });
    expect(calls).toEqual([]);
    expect(env).toEqual({});
  });

  it("fetches both keys with decryption and sets them, once per container", async () => {
    const { client, calls } = fakeSsm({ [params.OPENAI_API_KEY_PARAM]: "sk-o", [params.ANTHROPIC_API_KEY_PARAM]: "sk-a" });
    const env: Record<string, string | undefined> = { ...params };
    await loadLlmSecrets(env, { client, warn: ignore });
    await loadLlmSecrets(env, { client, warn: ignore });
    expect(env.OPENAI_API_KEY).toBe("sk-o");
    expect(env.ANTHROPIC_API_KEY).toBe("sk-a");
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.WithDecryption === true)).toBe(true);
  });

  it("leaves a provider unconfigured when its parameter does not exist, with a warning", async () => {
    const { client } = fakeSsm({ [params.OPENAI_API_KEY_PARAM]: "sk-o" });
    const warnings: unknown[] = [];
    const env: Record<string, string | undefined> = { ...params };
    await loadLlmSecrets(env, { client, warn: (m, f) => warnings.push({ m, f }) });
    expect(env.OPENAI_API_KEY).toBe("sk-o");
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(warnings).toEqual([{ m: expect.stringContaining("not found"), f: { parameter: params.ANTHROPIC_API_KEY_PARAM } }]);
  });

  it("keeps a key that is already in the environment and does not fetch it", async () => {
    const { client, calls } = fakeSsm({ [params.ANTHROPIC_API_KEY_PARAM]: "sk-a" });
    const env: Record<string, string | undefined> = { ...params, OPENAI_API_KEY: "already" };
    await loadLlmSecrets(env, { client, warn: ignore });
    expect(env.OPENAI_API_KEY).toBe("already");
    expect(calls.map((c) => c.Name)).toEqual([params.ANTHROPIC_API_KEY_PARAM]);
  });

  it("rejects on other failures without touching the environment, and retries on the next call", async () => {
    const values: Record<string, string | Error> = {
      [params.OPENAI_API_KEY_PARAM]: "sk-o",
      [params.ANTHROPIC_API_KEY_PARAM]: Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }),
    };
    const { client, calls } = fakeSsm(values);
    const env: Record<string, string | undefined> = { ...params };
    await expect(loadLlmSecrets(env, { client, warn: ignore })).rejects.toThrow("Rate exceeded");
    expect(env.OPENAI_API_KEY).toBeUndefined();
    values[params.ANTHROPIC_API_KEY_PARAM] = "sk-a";
    await loadLlmSecrets(env, { client, warn: ignore });
    expect(env).toMatchObject({ OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a" });
    expect(calls).toHaveLength(4);
  });
});

describe("createSummarizingDeps", () => {
  it("builds the summarizer from the keys it loaded into the environment it was given", async () => {
    const { client } = fakeSsm({ [params.OPENAI_API_KEY_PARAM]: "sk-o" });
    const env: Record<string, string | undefined> = { OPENAI_API_KEY_PARAM: params.OPENAI_API_KEY_PARAM };
    const before = process.env.OPENAI_API_KEY;
    const deps = createSummarizingDeps(env, { ssmClient: client, log: createMemoryLog() });
    const summarizer = await deps.summarizer();
    expect([summarizer.provider, summarizer.model]).toEqual(["openai", "gpt-4o-mini"]);
    expect(env.OPENAI_API_KEY).toBe("sk-o");
    // The process's own environment is not where a given environment's keys go.
    expect(process.env.OPENAI_API_KEY).toBe(before);
  });

  it("logs a missing key parameter through the service's logger", async () => {
    const { client } = fakeSsm({});
    const log = createMemoryLog();
    const deps = createSummarizingDeps({ ANTHROPIC_API_KEY_PARAM: params.ANTHROPIC_API_KEY_PARAM }, { ssmClient: client, log });
    expect((await deps.summarizer()).provider).toBe("offline");
    expect(log.entries).toEqual([
      expect.objectContaining({ level: "WARN", message: expect.stringContaining("not found"), fields: { parameter: params.ANTHROPIC_API_KEY_PARAM } }),
    ]);
  });
});
