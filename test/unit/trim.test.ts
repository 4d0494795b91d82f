/**
 * Trimming the answer while a fold is queued: sized on the whole view, never on a smaller held
 * prompt, in blocks so that the cut stays put across appends (docs/compaction.md, step 5).
 */
import { describe, expect, it } from "vitest";
import type { Message, Role } from "../../core/domain/model.js";
import { trimBlock, trimLimit, trimToFit } from "../../core/domain/trim.js";
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
    expect(dear.trimmed).toEqual({ messages: 3, tokens: 600, fromMessageId: "m00", toMessageId: "m02" });
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
      expect(out.trimmed).toEqual({ messages: 3, tokens: 300, fromMessageId: "call", toMessageId: "result" });
    });

    it("when parallel calls were made in separate ASSISTANT messages and answered in reverse", () => {
      const history = [call("a1", "c1"), call("a2", "c2"), result("t2", "c2"), result("t1", "c1"), m("d", "ASSISTANT"), ...tail];
      const out = trim(history, 250);
      expect(out.kept.map((k) => k.id)).toEqual(["d", "x", "y", "question"]);
      expect(out.trimmed).toEqual({ messages: 4, tokens: 400, fromMessageId: "a1", toMessageId: "t1" });
    });
  });

  describe("in blocks", () => {
    const window = 10_000;
    const limit = trimLimit(DEFAULT_TUNABLES, window);
    const block = trimBlock(DEFAULT_TUNABLES, window);
    /** 95 messages of 100 tokens (just over the limit), then `turns` appends of 60 tokens each, one trim per append. */
    function cuts(withBlock: boolean, turns = 30) {
      const history: Message[] = Array.from({ length: 95 }, (_, i) => ({ ...messages[0]!, id: `m${String(i).padStart(3, "0")}`, role: i % 2 ? "ASSISTANT" : "USER" }));
      const answers: string[][] = [];
      for (let i = 0; i < turns; i++) {
        history.push({ ...messages[0]!, id: `m${String(95 + i).padStart(3, "0")}`, role: i % 2 ? "ASSISTANT" : "USER", tokens: 60 });
        const own = history.reduce((n, m) => n + m.tokens, 0);
        const trim = trimToFit(history, DEFAULT_TUNABLES, { tokens: own, limit, scale: 1, own, ...(withBlock ? { block } : {}) });
        expect(trim.tokens).toBeLessThanOrEqual(limit);
        expect(trim.tokens).toBeGreaterThan(limit - block - 100);
        answers.push(trim.kept.map((m) => m.id));
      }
      // A cut change: the answer no longer starts with the previous answer's messages.
      let changes = 0;
      for (let i = 1; i < answers.length; i++) if (answers[i - 1]!.some((id, k) => answers[i]![k] !== id)) changes++;
      return changes;
    }

    it("the block is the band between the hard and the emergency thresholds", () => {
      expect(block).toBe(1_000);
      expect(limit).toBe(9_499);
    });

    it("moves the cut at most twice over 30 appends, where an exact fit moves it on most turns", () => {
      // 30 appends of 60 tokens grow the prompt by 1,800 tokens: under two blocks.
      expect(cuts(true)).toBeLessThanOrEqual(2);
      expect(cuts(false)).toBeGreaterThanOrEqual(15);
    });

    it("frees exactly what is needed when the candidates do not hold a whole block", () => {
      const short = messages.slice(0, 10); // 1,000 tokens; the anchor and the triggering turn stay
      const trim = trimToFit(short, DEFAULT_TUNABLES, { tokens: 1_000, limit: 899, scale: 1, own: 1_000, block: 5_000 });
      expect(trim.trimmed).toMatchObject({ messages: 2, fromMessageId: "m00", toMessageId: "m01" });
      expect(trim.tokens).toBe(800);
    });

    it("names the first and last message left out when a pinned one stays between them", () => {
      const pinned = messages.map((m, i) => (i === 1 ? { ...m, tags: ["STRENGTH:pinned"] } : m));
      const trim = trimToFit(pinned, DEFAULT_TUNABLES, { tokens: 4_000, limit: 3_799, scale: 1, own: 4_000, block: 250 });
      expect(trim.trimmed).toEqual({ messages: 3, tokens: 300, fromMessageId: "m00", toMessageId: "m03" });
      expect(trim.kept.slice(0, 2).map((m) => m.id)).toEqual(["m01", "m04"]);
    });
  });
});
