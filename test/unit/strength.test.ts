import { describe, expect, it } from "vitest";
import {
  ACK_PHRASES,
  TRIVIAL_MAX_CHARS,
  effectiveStrength,
  hasStrengthTag,
  isAck,
  isSelfNarration,
  isTrivial,
  malformedStrengthTags,
  parseStrengthTag,
  strengthTag,
  strengthTagOf,
} from "../../core/domain/strength.js";

describe("strength tags", () => {
  it("builds and parses the canonical STRENGTH:<lowercase> form", () => {
    for (const s of ["weak", "normal", "strong", "pinned"] as const) {
      expect(strengthTag(s)).toBe(`STRENGTH:${s}`);
      expect(parseStrengthTag(strengthTag(s))).toBe(s);
    }
  });

  it("tolerates case and blanks so a pin is never lost to spelling", () => {
    expect(parseStrengthTag("STRENGTH:PINNED")).toBe("pinned");
    expect(parseStrengthTag(" strength:Strong ")).toBe("strong");
  });

  it("rejects other tags and unknown strengths", () => {
    expect(parseStrengthTag("MODE:plan")).toBeNull();
    expect(parseStrengthTag("STRENGTH:high")).toBeNull();
    expect(parseStrengthTag("STRENGTH:")).toBeNull();
    expect(parseStrengthTag("pinned")).toBeNull();
  });

  it("strengthTagOf picks the strongest of several tags and ignores the rest", () => {
    expect(strengthTagOf(["STRENGTH:weak", "MODE:plan", "STRENGTH:pinned"])).toBe("pinned");
    expect(strengthTagOf(["STRENGTH:normal", "STRENGTH:strong"])).toBe("strong");
    expect(strengthTagOf(["MODE:plan"])).toBeNull();
    expect(strengthTagOf([])).toBeNull();
  });

  it("hasStrengthTag is true only for a valid strength tag", () => {
    expect(hasStrengthTag(["STRENGTH:weak"])).toBe(true);
    expect(hasStrengthTag(["STRENGTH:bogus", "other"])).toBe(false);
    expect(hasStrengthTag([])).toBe(false);
  });

  it("malformedStrengthTags lists STRENGTH:* tags that name no strength", () => {
    expect(malformedStrengthTags(["STRENGTH:high", "STRENGTH:weak", "MODE:plan", "strength:x"])).toEqual([
      "STRENGTH:high",
      "strength:x",
    ]);
  });
});

describe("isAck", () => {
  const acks = [
    "ok", "OK", "Ok.", "okay!", "k", "thanks", "Thanks!!", "thank you", "Thank you so much!", "thx",
    "got it", "Got it.", "sounds good", "Sounds good!", "great", "Great!", "perfect", "cool", "sure",
    "yes", "no problem", "👍", "👍🏽", "ok 👍", "ok, thanks!", "Ok and thanks 🙏", "Got it, sounds good.",
    "thanks again", "  okay  ", "OK… thanks", "great, thank you!",
  ];
  for (const text of acks) {
    it(`accepts ${JSON.stringify(text)}`, () => expect(isAck(text)).toBe(true));
  }

  const notAcks = [
    "", "   ", "?", "no", "and", "ok, but the build still fails", "yes, delete the staging table",
    "thanks Bob", "ok 5", "great idea, now add retries", "thanks for the fix in auth.ts",
  ];
  for (const text of notAcks) {
    it(`rejects ${JSON.stringify(text)}`, () => expect(isAck(text)).toBe(false));
  }

  it("accepts every documented phrase on its own", () => {
    expect(ACK_PHRASES.filter((p) => !isAck(p))).toEqual([]);
  });

  it(`caps length at ${TRIVIAL_MAX_CHARS} chars`, () => {
    const atCap = Array(20).fill("ok").join(" ").padEnd(TRIVIAL_MAX_CHARS, "!");
    expect(atCap).toHaveLength(TRIVIAL_MAX_CHARS);
    expect(isAck(atCap)).toBe(true);
    expect(isAck(`${atCap}!`)).toBe(false);
  });
});

describe("isSelfNarration", () => {
  const narration = [
    "Let me check.", "I'll look into it.", "One moment.", "Working on it...", "Let me take a look",
    "Let me check the logs.", "On it!", "Give me a sec", "Hmm, let me think.", "Okay, let me look into that.",
    "Sure, one moment.", "I’m checking now", "Let's see", "Just a moment please", "I will get right on it",
    "Bear with me", "Looking into it", "I'm going to take a look at this now",
  ];
  for (const text of narration) {
    it(`accepts ${JSON.stringify(text)}`, () => expect(isSelfNarration(text)).toBe(true));
  }

  const notNarration = [
    "Let me check the logs: the error is X at line 42",
    "Let me check. The error is at line 42.",
    "Let me delete the database",
    "I'll fix the retry loop in the uploader",
    "Checking: 42 rows failed validation",
    "ok",
    "let me",
    "",
  ];
  for (const text of notNarration) {
    it(`rejects ${JSON.stringify(text)}`, () => expect(isSelfNarration(text)).toBe(false));
  }

  it(`is never trivial above ${TRIVIAL_MAX_CHARS} chars`, () => {
    const long = `Let me check${".".repeat(TRIVIAL_MAX_CHARS)}`;
    expect(isSelfNarration(long)).toBe(false);
    expect(isSelfNarration("Let me check...")).toBe(true);
  });
});

describe("effectiveStrength", () => {
  it("lets an explicit tag win over the content", () => {
    expect(effectiveStrength({ tags: ["STRENGTH:pinned"], content: "ok" })).toBe("pinned");
    expect(effectiveStrength({ tags: ["STRENGTH:weak"], content: "The schema is final: v2." })).toBe("weak");
  });

  it("makes untagged trivial messages weak and substantive ones normal", () => {
    expect(effectiveStrength({ tags: [], content: "thanks!" })).toBe("weak");
    expect(effectiveStrength({ tags: [], content: "Let me check." })).toBe("weak");
    expect(effectiveStrength({ tags: [], content: "Use Postgres 16 for the new service." })).toBe("normal");
  });

  it("ignores a malformed strength tag and falls back to the content", () => {
    expect(effectiveStrength({ tags: ["STRENGTH:high"], content: "ok" })).toBe("weak");
  });

  it("never calls a message with tool calls trivial, whatever its prose", () => {
    const withCall = { content: "Let me check.", toolCalls: [{ id: "c1", name: "grep", arguments: "{}" }] };
    expect(isTrivial(withCall)).toBe(false);
    expect(effectiveStrength({ ...withCall, tags: [] })).toBe("normal");
    expect(isTrivial({ content: "Let me check.", toolCalls: [] })).toBe(true);
  });
});
