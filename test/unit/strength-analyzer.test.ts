import { describe, expect, it } from "vitest";
import { AppendMessageBody } from "../../core/adapters/http/schemas.js";
import { buildStrengthPrompt, parseStrengthAnswer, RATED_MESSAGE_CHARS } from "../../core/domain/strength-analyzer-prompt.js";
import {
  analyzable,
  analyzedTags,
  analyzerMark,
  analyzerOf,
  offlineStrength,
  ratesMessage,
  sideChannelTags,
  STRONG_MAX_CHARS,
} from "../../core/domain/strength-analyzer.js";
import { effectiveStrength, withStrength } from "../../core/domain/strength.js";

const say = (content: string, role: "USER" | "ASSISTANT" | "SYSTEM" | "TOOL" = "ASSISTANT") => ({ role, content });

describe("offlineStrength", () => {
  it.each([
    "Decision: exports go to the new bucket from Monday.",
    "We decided to keep the old API for now.",
    "You must not deploy on Fridays.",
    "The deadline for the report is the end of the quarter.",
    "Budget is tight, keep it cheap.",
    "I'll send the signed contract by Friday, 3 May.",
    "Caroline ran her first 5k on 12 May 2023.",
    "Set retries in config/retry.yaml to 15.",
  ])("rates a decision, constraint, commitment or name with a number or date strong: %s", (content) => {
    expect(offlineStrength(say(content))).toBe("strong");
  });

  it.each(["ok, thanks!", "Got it 👍", "Let me check.", "I'll look into it.", "One moment."])(
    "rates acknowledgements and self-narration weak: %s",
    (content) => {
      expect(offlineStrength(say(content))).toBe("weak");
    },
  );

  it.each([
    "That sounds like a lovely afternoon at the beach.",
    "I painted a sunset last week, it came out nicely.",
    "How are the kids doing these days?",
  ])("rates ordinary talk normal: %s", (content) => {
    expect(offlineStrength(say(content))).toBe("normal");
  });

  it("never rates a tool result, a tool call or a very long message strong, and never pins", () => {
    expect(offlineStrength(say("Decision: deploy v2 on 12 May.", "TOOL"))).toBe("normal");
    expect(offlineStrength({ role: "ASSISTANT", content: "Decision: run it.", toolCalls: [{ id: "c1", name: "run", arguments: "{}" }] })).toBe("normal");
    expect(offlineStrength(say(`Decision: ${"we keep the plan. ".repeat(STRONG_MAX_CHARS / 10)}`))).toBe("normal");
    expect(ratesMessage(say("x", "TOOL"))).toBe(false);
    expect(ratesMessage({ role: "ASSISTANT", content: "", toolCalls: [{ id: "c", name: "n", arguments: "{}" }] })).toBe(false);
    expect(ratesMessage(say("x", "USER"))).toBe(true);
  });
});

describe("the analyzer's own tags", () => {
  it("are a strength tag plus a mark naming the analyzer, replacing only an earlier analyzer rating", () => {
    const tags = analyzedTags(["MODE:plan"], "strong", "offline");
    expect(tags).toEqual(["MODE:plan", "STRENGTH:strong", "STRENGTH_BY:offline-analyzer"]);
    expect(analyzerOf(tags)).toBe("offline");
    expect(analyzedTags(tags, "weak", "model")).toEqual(["MODE:plan", "STRENGTH:weak", "STRENGTH_BY:model-analyzer"]);
    expect(effectiveStrength({ tags, content: "ok" })).toBe("strong");
  });

  it("never rate a message the caller rated; the model may re-rate an offline rating, not the other way round", () => {
    expect(analyzable([], "offline")).toBe(true);
    expect(analyzable(["STRENGTH:weak"], "offline")).toBe(false);
    expect(analyzable(["STRENGTH:weak"], "model")).toBe(false);
    expect(analyzable(["STRENGTH:pinned"], "model")).toBe(false);
    expect(analyzable(analyzedTags([], "normal", "offline"), "model")).toBe(true);
    expect(analyzable(analyzedTags([], "normal", "offline"), "offline")).toBe(false);
    expect(analyzable(analyzedTags([], "normal", "model"), "model")).toBe(false);
    expect(analyzerOf(["STRENGTH:strong"])).toBeNull();
  });

  it("go away when the caller sets a strength (the rating is then the caller's)", () => {
    const tags = analyzedTags(["MODE:plan"], "strong", "model");
    expect(withStrength(tags, "weak")).toEqual(["MODE:plan", "STRENGTH:weak"]);
    expect(withStrength(tags, null)).toEqual(["MODE:plan"]);
  });

  it("the side channel adds the offline rating only to an unrated message it rates", () => {
    expect(sideChannelTags([], say("Decision: ship on 3 May."))).toEqual(["STRENGTH:strong", analyzerMark("offline")]);
    expect(sideChannelTags(["STRENGTH:pinned"], say("ok", "USER"))).toEqual(["STRENGTH:pinned"]);
    expect(sideChannelTags(["x"], say("result", "TOOL"))).toEqual(["x"]);
  });

  it("a caller may not send the analyzer's mark", () => {
    const out = AppendMessageBody.safeParse({ role: "USER", content: "hi", tags: ["STRENGTH:strong", "strength_by:model-analyzer"] });
    expect(out.success).toBe(false);
    expect(JSON.stringify(out.error?.issues)).toContain("reserved for the strength analyzer");
  });
});

describe("the model analyzer's prompt and answer", () => {
  const messages = [say("Decision: ship on 3 May.", "USER"), say("ok"), say("x".repeat(2000), "USER")];

  it("numbers the messages, clips long ones and sizes the answer to the batch", () => {
    const prompt = buildStrengthPrompt(messages, 100_000);
    expect(prompt.messages).toBe(3);
    expect(prompt.user).toContain("#1 USER: Decision: ship on 3 May.");
    expect(prompt.user).toContain("#2 ASSISTANT: ok");
    expect(prompt.user).not.toContain("x".repeat(RATED_MESSAGE_CHARS + 1));
    expect(prompt.system).toContain("#<number> <strong|normal|weak>");
    expect(prompt.maxOutputTokens).toBeGreaterThanOrEqual(3 * 5);
    // A small input budget takes the oldest messages that fit, at least one.
    expect(buildStrengthPrompt(messages, 10).messages).toBe(1);
  });

  it("reads ratings in the asked form and common variants", () => {
    const answer = parseStrengthAnswer("```\n#1 strong\n2: weak\n- #3 **normal**\n```", 3);
    expect(answer).toEqual({ ok: true, ratings: new Map([[1, "strong"], [2, "weak"], [3, "normal"]]) });
    expect(parseStrengthAnswer("#2 weak", 3)).toEqual({ ok: true, ratings: new Map([[2, "weak"]]) });
  });

  it.each([
    ["a refusal", "I'm sorry, but I can't help with that."],
    ["chatter around the ratings", "Sure! Here you go:\n#1 strong"],
    ["a number outside the batch", "#1 strong\n#4 weak"],
    ["a pin", "#1 pinned"],
    ["two ratings of one message", "#1 strong\n#1 weak"],
    ["nothing", "  "],
  ])("rejects %s whole", (_, text) => {
    expect(parseStrengthAnswer(text, 3).ok).toBe(false);
  });
});
