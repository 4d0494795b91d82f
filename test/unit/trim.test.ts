/** Trimming the answer while a fold is queued: sized on the whole view, never on a smaller held prompt. */
import { describe, expect, it } from "vitest";
import type { Message } from "../../core/domain/model.js";
import { trimToFit } from "../../core/domain/trim.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";

const messages: Message[] = Array.from({ length: 40 }, (_, i) => ({
  id: `m${String(i).padStart(2, "0")}`,
  processId: "p",
  role: i % 2 ? "ASSISTANT" : "USER",
  content: `turn ${i}`,
  tags: [],
  createdAt: "2024-05-01T10:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 100,
}));

describe("trimToFit", () => {
  it("measures the whole view when the caller's prompt is smaller (it holds an earlier trimmed answer)", () => {
    // The view is 4,000 own tokens; the engine reports 3,000 because it left out what the last answer trimmed.
    const trim = trimToFit(messages, DEFAULT_TUNABLES, { tokens: 3_000, limit: 3_799, scale: 0.75, own: 4_000 });
    expect(trim.trimmed.messages).toBe(3);
    expect(trim.tokens).toBe(3_700);
    expect(trim.tokens).toBe(4_000 - trim.trimmed.tokens);
    expect(trim.kept.map((m) => m.id)).toEqual(messages.filter((m) => !["m00", "m01", "m02"].includes(m.id)).map((m) => m.id));
  });

  it("converts at the caller's rate when its tokens are dearer than ours, and leaves a prompt below the limit alone", () => {
    const dear = trimToFit(messages, DEFAULT_TUNABLES, { tokens: 8_000, limit: 7_599, scale: 2, own: 4_000 });
    expect(dear.trimmed).toEqual({ messages: 3, tokens: 600 });
    expect(dear.tokens).toBe(7_400);
    const fits = trimToFit(messages, DEFAULT_TUNABLES, { tokens: 3_000, limit: 3_799, scale: 1, own: 3_000 });
    expect(fits).toEqual({ kept: messages, trimmed: { messages: 0, tokens: 0 }, tokens: 3_000 });
  });
});
