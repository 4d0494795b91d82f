/**
 * The window a turn uses (docs/turns.md, "The window the turn used"): exact names and their dated
 * snapshots only, `contextWindow` first, and the `maxPromptTokens` cap with its source.
 */
import { describe, expect, it } from "vitest";
import { AppError } from "../../core/domain/errors.js";
import { cappedWindow, knownModelName, resolveModelWindow } from "../../core/domain/model-windows.js";

describe("knownModelName", () => {
  it.each([
    ["gpt-4o", "gpt-4o"],
    ["gpt-4o-2024-08-06", "gpt-4o"],
    ["gpt-4-0613", "gpt-4"],
    ["gpt-3.5-turbo-0125", "gpt-3.5-turbo"],
    ["o1-2024-12-17", "o1"],
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["claude-haiku-4-5@20251001", "claude-haiku-4-5"],
    ["claude-3-5-haiku-latest", "claude-3-5-haiku-latest"],
    ["openrouter/OpenAI/GPT-4.1-mini", "gpt-4.1-mini"],
  ])("matches %s as %s", (name, matched) => {
    expect(knownModelName(name)).toBe(matched);
  });

  it.each(["gpt-4-oh", "gpt-4o-mini-high", "gpt-4o-2024-08", "gpt-4o-20240806x", "claude-sonnet", "claude-3-5-sonnet-v2", "gpt-4o@2024"])(
    "does not match %s by a prefix",
    (name) => {
      expect(knownModelName(name)).toBeUndefined();
    },
  );
});

describe("resolveModelWindow", () => {
  it("takes model.contextWindow first, whatever the name", () => {
    expect(resolveModelWindow({ name: "my-llama", contextWindow: 4000 })).toEqual({ tokens: 4000, source: "request" });
    expect(resolveModelWindow({ name: "gpt-4o", contextWindow: 4000 })).toEqual({ tokens: 4000, source: "request" });
  });

  it("names the listed model a dated snapshot matched", () => {
    expect(resolveModelWindow({ name: "gpt-4o-2024-08-06" })).toEqual({ tokens: 128_000, source: "model", model: "gpt-4o" });
  });

  it("answers a 400 naming a model it does not know exactly", () => {
    const thrown = (() => {
      try {
        resolveModelWindow({ name: "gpt-4-oh" });
      } catch (e) {
        return e;
      }
    })();
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ kind: "input", code: "model.context_window_required" });
    expect((thrown as Error).message).toContain("'gpt-4-oh' is not known");
  });
});

describe("cappedWindow", () => {
  const model = { tokens: 128_000, source: "model" as const, model: "gpt-4o" };

  it("caps the window at maxPromptTokens, one token below it included", () => {
    expect(cappedWindow(model, 127_999)).toEqual({ tokens: 127_999, source: "setting", model: "gpt-4o" });
    expect(cappedWindow({ tokens: 4000, source: "request" }, 1000)).toEqual({ tokens: 1000, source: "setting" });
  });

  it("leaves the window as it is at or above the cap, or without one", () => {
    expect(cappedWindow(model, 128_000)).toBe(model);
    expect(cappedWindow(model, 1_000_000)).toBe(model);
    expect(cappedWindow(model, null)).toBe(model);
    expect(cappedWindow(model, undefined)).toBe(model);
  });
});
