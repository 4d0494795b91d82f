/**
 * One options type for both SDK summarizers (core/adapters/llm/remote-summarizer.ts): the same
 * fields mean the same thing for OpenAI and Anthropic, and the SDK clients they build never retry
 * on their own or read the environment.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { AnthropicSummarizerOptions } from "../../core/adapters/llm/anthropic-summarizer.js";
import type { OpenAISummarizerOptions } from "../../core/adapters/llm/openai-summarizer.js";
import { remoteConfig, sdkClientOptions, type RemoteSummarizerOptions } from "../../core/adapters/llm/remote-summarizer.js";
import { DEFAULT_RETRY_POLICY } from "../../core/adapters/llm/retry.js";
import { UNKNOWN_MODEL_CONTEXT_WINDOW } from "../../core/domain/model-windows.js";

describe("remote summarizer options", () => {
  it("are one type: Anthropic's is it, OpenAI's adds only the output-limit field", () => {
    expectTypeOf<AnthropicSummarizerOptions>().toEqualTypeOf<RemoteSummarizerOptions<Anthropic>>();
    expectTypeOf<Omit<OpenAISummarizerOptions, "tokenLimitParam">>().toEqualTypeOf<RemoteSummarizerOptions<OpenAI>>();
  });

  it("fill the defaults the same way for both providers", () => {
    expect(remoteConfig({}, "some-unlisted-model")).toEqual({
      model: "some-unlisted-model",
      policy: DEFAULT_RETRY_POLICY,
      contextWindow: UNKNOWN_MODEL_CONTEXT_WINDOW,
      maxOutputTokens: 400,
    });
    const config = remoteConfig({ model: "m", contextWindow: 9_000, maxOutputTokens: 250, retry: { maxAttempts: 1 } }, "d");
    expect(config).toEqual({
      model: "m",
      policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 },
      contextWindow: 9_000,
      maxOutputTokens: 250,
    });
  });

  it("build SDK clients without SDK retries, with the deadline as their own timer's backstop, and without an environment fallback for the base URL", () => {
    expect(sdkClientOptions({}, DEFAULT_RETRY_POLICY)).toEqual({
      apiKey: undefined,
      baseURL: null,
      maxRetries: 0,
      timeout: DEFAULT_RETRY_POLICY.deadlineMs,
    });
    const fetchImpl: typeof fetch = async () => new Response("{}");
    expect(sdkClientOptions({ apiKey: "k", baseURL: "http://127.0.0.1:1/v1", fetch: fetchImpl }, DEFAULT_RETRY_POLICY)).toMatchObject({
      apiKey: "k",
      baseURL: "http://127.0.0.1:1/v1",
      fetch: fetchImpl,
    });
  });
});
