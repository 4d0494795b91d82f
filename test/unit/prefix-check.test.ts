/**
 * The emulated prompt cache of tools/prefix-check.ts: a request is read front to back in segments,
 * and a prompt that starts with the previous one reads all of it; it agrees with `requestBreak`.
 */
import { describe, expect, it } from "vitest";
import { requestBreak, requestSegments, sharedPrefix } from "../../tools/prefix-check.js";

const a = { role: "user", content: [{ type: "text", text: "first" }] };
const b = { role: "assistant", content: [{ type: "text", text: "second" }] };
const c = { role: "user", content: [{ type: "text", text: "third" }] };

describe("requestSegments and sharedPrefix", () => {
  it("reads all of the previous request when the new one only appends", () => {
    const before = { system: [{ type: "text", text: "memory" }], messages: [a, b] };
    const now = { system: [{ type: "text", text: "memory" }], messages: [a, b, { ...c, cache_control: undefined }] };
    const previous = requestSegments(before);
    const shared = sharedPrefix(previous, requestSegments(now));
    expect(shared.kept).toBe(true);
    expect(shared.read).toBe(previous.join("").length);
    expect(shared.total).toBeGreaterThan(shared.read);
    expect(requestBreak(before, now)).toBeNull();
  });

  it("reads nothing past a changed system block, and says the prefix broke as requestBreak does", () => {
    const before = { system: [{ type: "text", text: "memory" }], messages: [a, b] };
    const now = { system: [{ type: "text", text: "memory + recall" }], messages: [a, b, c] };
    const shared = sharedPrefix(requestSegments(before), requestSegments(now));
    expect(shared).toMatchObject({ read: 0, kept: false });
    expect(requestBreak(before, now)).toBe("system changed");
  });

  it("reads up to the first rewritten message, cache_control aside", () => {
    const before = { input: [a, b, c] };
    const now = { input: [{ ...a, cache_control: { type: "ephemeral" } }, { ...b, content: [{ type: "text", text: "rewritten" }] }, c] };
    const segments = requestSegments(now);
    const shared = sharedPrefix(requestSegments(before), segments);
    expect(shared.kept).toBe(false);
    expect(shared.read).toBe(segments[0]!.length);
    expect(shared.total).toBe(segments.join("").length);
    expect(requestBreak(before, now)).toBe("input.1 changed");
  });

  it("counts a shorter request as a break", () => {
    const shared = sharedPrefix(requestSegments({ contents: [a, b, c] }), requestSegments({ contents: [a] }));
    expect(shared.kept).toBe(false);
    expect(requestBreak({ contents: [a, b, c] }, { contents: [a] })).not.toBeNull();
  });
});
