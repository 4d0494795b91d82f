/**
 * Input the contract does not expect, at the domain level: strength tags in another case, topic
 * labels that would not make a valid marker tag, and a range that reaches the triggering turn.
 */
import { describe, expect, it } from "vitest";
import type { Message, Role } from "../../core/domain/model.js";
import { AppendMessageBody, RangeCompactionBody } from "../../core/adapters/http/schemas.js";
import { RANGE_MARKER_PREFIX, Tag, TopicLabel } from "../../core/domain/fields.js";
import { selectForCompaction } from "../../core/domain/selector.js";
import { effectiveStrength, strengthTagOf } from "../../core/domain/strength.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { selectRange } from "../../core/domain/range.js";

let seq = 0;
function msg(role: Role, content: string, tags: string[] = []): Message {
  seq++;
  return {
    id: `m${String(seq).padStart(4, "0")}`,
    processId: "p1",
    role,
    content,
    tags,
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
    archivedInMemoryId: null,
    tokens: 20,
  };
}

describe("strength tags have one spelling", () => {
  it("the request boundary rewrites any case of a valid strength tag to STRENGTH:<strength>", () => {
    const body = AppendMessageBody.parse({ role: "USER", content: "keep", tags: ["strength:Pinned", "MODE:plan"] });
    expect(body.tags).toEqual(["STRENGTH:pinned", "MODE:plan"]);
    expect(Tag.parse(" Strength:WEAK ")).toBe("STRENGTH:weak");
    expect(Tag.parse("STRENGTH:strong")).toBe("STRENGTH:strong");
  });

  it("the boundary refuses a STRENGTH tag in any case that names no strength, quoting it", () => {
    for (const tag of ["strength:high", "STRENGTH:high", "Strength:"]) {
      const parsed = AppendMessageBody.safeParse({ role: "USER", content: "x", tags: [tag] });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues[0]!.message).toContain(`'${tag}'`);
    }
  });

  it("two spellings of one strength still count as two STRENGTH tags", () => {
    expect(AppendMessageBody.safeParse({ role: "USER", content: "x", tags: ["STRENGTH:weak", "strength:pinned"] }).success).toBe(false);
  });

  it("the selector matches the canonical spelling only", () => {
    expect(strengthTagOf(["STRENGTH:pinned"])).toBe("pinned");
    expect(strengthTagOf(["strength:pinned"])).toBeNull();
    expect(strengthTagOf(["STRENGTH:PINNED"])).toBeNull();
    const content = "The migration runs on Friday at 18:00 UTC.";
    expect(effectiveStrength({ tags: ["strength:pinned"], content })).toBe("normal");

    // EMERGENCY folds everything but pinned messages outside its anchor of 3.
    const pinned = msg("USER", content, ["STRENGTH:pinned"]);
    const otherCase = msg("USER", content, ["strength:pinned"]);
    const rest = Array.from({ length: 12 }, (_, i) => msg(i % 2 ? "ASSISTANT" : "USER", `detail number ${i} of the plan`));
    const fold = selectForCompaction([pinned, otherCase, ...rest], "EMERGENCY", DEFAULT_TUNABLES).fold.map((m) => m.id);
    expect(fold).not.toContain(pinned.id);
    expect(fold).toContain(otherCase.id);
  });
});

describe("topic labels make valid marker tags", () => {
  const longest = "x".repeat(128 - RANGE_MARKER_PREFIX.length);

  it("accepts labels whose marker tag is a valid tag, and refuses the others", () => {
    for (const label of ["db-migration", "Löwenzahn ✓ launch", longest]) {
      expect(TopicLabel.safeParse(label).success).toBe(true);
      expect(Tag.safeParse(`${RANGE_MARKER_PREFIX}${label}`).success).toBe(true);
    }
    for (const label of [`${longest}y`, "line\nbreak", "tab\there", "   ", ""]) {
      expect(TopicLabel.safeParse(label).success).toBe(false);
    }
  });

  it("the range body names topicLabel when it is refused", () => {
    const at = "2025-01-01T00:00:00Z";
    const parsed = RangeCompactionBody.safeParse({ from: at, to: at, topicLabel: "x".repeat(200) });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path).toEqual(["topicLabel"]);
    expect(parsed.error!.issues[0]!.message).toContain("at most 115 characters");
  });
});

describe("selectRange never folds the triggering turn", () => {
  const all = { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", topicLabel: "all" };

  it("keeps the newest USER message and everything after it, even inside the range", () => {
    const before = [msg("USER", "first question"), msg("ASSISTANT", "first answer"), msg("USER", "second question"), msg("ASSISTANT", "second answer")];
    const turn = [msg("USER", "the current request"), msg("ASSISTANT", "working on it"), msg("ASSISTANT", "still working")];
    const fold = selectRange([...before, ...turn], all).map((m) => m.id);
    expect(fold).toEqual(before.map((m) => m.id));
  });

  it("folds nothing when the range holds only the triggering turn", () => {
    const messages = [msg("USER", "only request"), msg("ASSISTANT", "an answer")];
    expect(selectRange(messages, all)).toEqual([]);
  });
});
