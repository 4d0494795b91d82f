/**
 * The bound on a turn's answer (docs/api.md, "Native content"): at the limit it is sent as built; one byte
 * past, native content is left to `request`, or the turn is a 413 naming the size.
 */
import { describe, expect, it } from "vitest";
import { answerBytes, fitTurnAnswer, MAX_ANSWER_BYTES } from "../../core/domain/answer-size.js";
import type { Message } from "../../core/domain/model.js";

const message = (content: string, native?: Message["native"]): Message => ({
  id: "msg_1",
  processId: "p",
  role: "USER",
  content,
  tags: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 1,
  ...(native ? { native } : {}),
});

/** An answer of exactly `bytes` bytes as the proxy carries it, padded in a text message. */
function answerOf(bytes: number, extra: Record<string, unknown> = {}) {
  const base = { messages: [message("")], ...extra };
  const pad = bytes - answerBytes(base);
  const answer = { ...base, messages: [message("x".repeat(pad))] };
  expect(answerBytes(answer)).toBe(bytes);
  return answer;
}

describe("the turn answer's bound", () => {
  it("counts the body as the proxy carries it: escapes and multi-byte characters included", () => {
    expect(answerBytes({ a: "\"" })).toBe(JSON.stringify(JSON.stringify({ a: "\"" })).length);
    expect(answerBytes("é")).toBe(Buffer.byteLength(JSON.stringify(JSON.stringify("é"))));
  });

  it("sends an answer of exactly the limit as built, and refuses one a byte past with no request to fall back to", () => {
    const at = answerOf(MAX_ANSWER_BYTES);
    expect(fitTurnAnswer(at)).toBe(at);
    const past = answerOf(MAX_ANSWER_BYTES + 1);
    expect(() => fitTurnAnswer(past)).toThrow(expect.objectContaining({ code: "turn.answer_too_large", kind: "too_large" }));
    expect(() => fitTurnAnswer(past)).toThrow(/6000001 bytes, past the 6000000/);
  });

  it("a byte past with a request: the messages leave their native content to it, and say so", () => {
    const native = { format: "anthropic" as const, content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(1000) } }] };
    const request = { messages: [{ role: "user", content: native.content }] };
    const answer = { messages: [message("see image", native)], request };
    const limit = answerBytes(answer) - 1;
    const fitted = fitTurnAnswer(answer, limit);
    expect(fitted.messagesWithoutNative).toBe(true);
    expect(fitted.messages[0]!.native).toBeUndefined();
    expect(fitted.messages[0]!.content).toBe("see image");
    expect(fitted.request).toBe(request);
    // When even that does not fit: the 413.
    expect(() => fitTurnAnswer(answer, answerBytes(request))).toThrow(expect.objectContaining({ code: "turn.answer_too_large" }));
  });
});
