/** Trimming the answer while a fold is queued: sized on the whole view, never on a smaller held prompt. */
import { describe, expect, it } from "vitest";
import type { Message, Role } from "../../core/domain/model.js";
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

  describe("never leaves a tool result without its call, nor a call without its results", () => {
    const m = (id: string, role: Role, extra: Partial<Message> = {}): Message => ({ ...messages[0]!, id, role, content: id, ...extra });
    const call = (id: string, callId: string) => m(id, "ASSISTANT", { toolCalls: [{ id: callId, name: "grep", arguments: "{}" }] });
    const result = (id: string, callId: string) => m(id, "TOOL", { toolCallId: callId });
    // The EMERGENCY anchor (3) and the triggering USER message stay; 100 tokens each.
    const tail = [m("x", "ASSISTANT"), m("y", "ASSISTANT"), m("question", "USER")];
    const trim = (history: Message[], toFree: number) => {
      const own = history.length * 100;
      return trimToFit(history, DEFAULT_TUNABLES, { tokens: own, limit: own - toFree, scale: 1, own });
    };

    it("when another message sits between a call and its result", () => {
      const history = [call("call", "c1"), m("note", "SYSTEM"), result("result", "c1"), m("d", "ASSISTANT"), ...tail];
      const out = trim(history, 50);
      expect(out.kept.map((k) => k.id)).toEqual(["d", "x", "y", "question"]);
      expect(out.trimmed).toEqual({ messages: 3, tokens: 300 });
    });

    it("when parallel calls were made in separate ASSISTANT messages and answered in reverse", () => {
      const history = [call("a1", "c1"), call("a2", "c2"), result("t2", "c2"), result("t1", "c1"), m("d", "ASSISTANT"), ...tail];
      const out = trim(history, 250);
      expect(out.kept.map((k) => k.id)).toEqual(["d", "x", "y", "question"]);
      expect(out.trimmed).toEqual({ messages: 4, tokens: 400 });
    });
  });
});
