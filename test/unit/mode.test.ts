import { describe, expect, it } from "vitest";
import { AppError } from "../../core/domain/errors.js";
import { anchorFor, modeForRatio, promptRatio, promptTokens } from "../../core/domain/mode.js";
import {
  MESSAGE_OVERHEAD_TOKENS,
  charsPerTokenCounter,
  createTokenCounter,
  encodingForModel,
  estimateTokens,
  messageChars,
  messageTokens,
} from "../../core/domain/tokens.js";
import { DEFAULT_TUNABLES, mergeTunables } from "../../core/domain/tunables.js";

describe("modeForRatio", () => {
  const cases: [number, string][] = [
    [0, "NONE"],
    [0.3999, "NONE"],
    [0.4, "SOFT"],
    [0.8499, "SOFT"],
    [0.85, "HARD"],
    [0.9499, "HARD"],
    [0.95, "EMERGENCY"],
    [1, "EMERGENCY"],
    [3.2, "EMERGENCY"],
    [Number.POSITIVE_INFINITY, "EMERGENCY"],
    [Number.NaN, "NONE"],
  ];
  for (const [ratio, mode] of cases) {
    it(`maps ${ratio} to ${mode} with the defaults (a threshold reached triggers)`, () => {
      expect(modeForRatio(ratio, DEFAULT_TUNABLES)).toBe(mode);
    });
  }

  it("follows overridden thresholds", () => {
    const tunables = mergeTunables(DEFAULT_TUNABLES, { hardThreshold: 0.75 });
    expect(modeForRatio(0.75, tunables)).toBe("HARD");
    expect(modeForRatio(0.75, DEFAULT_TUNABLES)).toBe("SOFT");
  });
});

describe("anchorFor", () => {
  it("returns each mode's anchor and anchors everything in NONE", () => {
    expect(anchorFor("SOFT", DEFAULT_TUNABLES)).toBe(10);
    expect(anchorFor("HARD", DEFAULT_TUNABLES)).toBe(5);
    expect(anchorFor("EMERGENCY", DEFAULT_TUNABLES)).toBe(3);
    expect(anchorFor("NONE", DEFAULT_TUNABLES)).toBe(Number.POSITIVE_INFINITY);
  });

  it("follows overridden anchors", () => {
    const tunables = mergeTunables(DEFAULT_TUNABLES, { softAnchor: 7, hardAnchor: 0 });
    expect(anchorFor("SOFT", tunables)).toBe(7);
    expect(anchorFor("HARD", tunables)).toBe(0);
  });
});

describe("promptRatio / promptTokens (api.md)", () => {
  it("uses prompt.tokens as given", () => {
    expect(promptRatio({ tokens: 60_000 }, 5, 100_000)).toBe(0.6);
    expect(promptTokens({ tokens: 60_000 }, 5)).toEqual({ tokens: 60_000, source: "prompt.tokens" });
  });

  it("uses chars/4 (rounded up) for prompt.chars", () => {
    expect(promptTokens({ chars: 401 }, 5)).toEqual({ tokens: 101, source: "prompt.chars" });
    expect(promptRatio({ chars: 400_000 }, 5, 200_000)).toBe(0.5);
  });

  it("uses chars/4 of prompt.text", () => {
    expect(promptTokens({ text: "x".repeat(10) }, 5)).toEqual({ tokens: 3, source: "prompt.text" });
  });

  it("prefers tokens over chars over text", () => {
    expect(promptTokens({ tokens: 7, chars: 400, text: "abc" }, 5).source).toBe("prompt.tokens");
    expect(promptTokens({ chars: 400, text: "abc" }, 5).source).toBe("prompt.chars");
  });

  it("falls back to the service's own estimate without a prompt (or an empty one)", () => {
    expect(promptRatio(undefined, 850, 1000)).toBe(0.85);
    expect(promptTokens({}, 42)).toEqual({ tokens: 42, source: "estimate" });
  });

  it("rejects a context window that is not a positive number", () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => promptRatio(undefined, 1, bad)).toThrow(AppError);
    }
  });
});

describe("token estimation", () => {
  it("estimateTokens is chars/4 rounded up", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
  });

  it("messageChars counts content plus tool call names and arguments", () => {
    const m = { content: "hello", toolCalls: [{ id: "c1", name: "grep", arguments: '{"q":1}' }] };
    expect(messageChars(m)).toBe(5 + 4 + 7);
  });

  it("messageTokens adds the per-message overhead, so an empty message is not free", () => {
    expect(messageTokens({ content: "" })).toBe(MESSAGE_OVERHEAD_TOKENS);
    const m = { content: "abcdefgh", toolCalls: [{ id: "c1", name: "grep", arguments: "12345" }] };
    expect(messageTokens(m)).toBe(2 + 1 + 2 + MESSAGE_OVERHEAD_TOKENS);
    expect(messageTokens(m, () => 10)).toBe(30 + MESSAGE_OVERHEAD_TOKENS);
  });

  it("maps known OpenAI families to their encodings and anything else to none", () => {
    expect(encodingForModel("gpt-4o-mini")).toBe("o200k_base");
    expect(encodingForModel("openai/gpt-5")).toBe("o200k_base");
    expect(encodingForModel("o3-mini")).toBe("o200k_base");
    expect(encodingForModel("gpt-4-turbo")).toBe("cl100k_base");
    expect(encodingForModel("claude-sonnet-4")).toBeNull();
    expect(encodingForModel(undefined)).toBeNull();
  });

  it("createTokenCounter defaults to chars/4 and is exact for an OpenAI model", async () => {
    expect(await createTokenCounter()).toBe(charsPerTokenCounter);
    expect(await createTokenCounter("llama3.1:8b")).toBe(charsPerTokenCounter);
    const exact = await createTokenCounter("gpt-4o");
    expect(exact.exact).toBe(true);
    expect(exact.encoding).toBe("o200k_base");
    expect(exact.count("hello world")).toBe(2);
    // Special-token text in chat content is counted, not rejected.
    expect(exact.count("a <|endoftext|> b")).toBeGreaterThan(3);
  });
});
