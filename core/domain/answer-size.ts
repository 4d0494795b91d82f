/**
 * The bound on a turn's answer (docs/api.md, "Native content"): Lambda answers a synchronous invocation
 * with at most 6 MB, and API Gateway's proxy answer carries the body as a JSON string, so the
 * bytes that count are those of the body once more encoded as a string. An answer past the bound
 * would reach the engine as a bare 502 with the turn's work done; instead the turn first leaves
 * native content to `request` alone, and past that answers a 413 naming the size.
 */
import { AppError } from "./errors.js";
import type { Message } from "./model.js";

/** Lambda's 6 MB, less room for the proxy answer's status and headers. */
export const MAX_ANSWER_BYTES = 6_000_000;

/** Bytes of `body` as the proxy answer holds it (a JSON string inside JSON). */
export const answerBytes = (body: unknown): number => Buffer.byteLength(JSON.stringify(JSON.stringify(body)), "utf8");

const withoutNative = (m: Message): Message => {
  if (m.native === undefined) return m;
  const { native: _inRequest, ...rest } = m;
  return rest;
};

/**
 * The turn's answer as it may be sent: unchanged when it fits; else, when it has a `request`
 * (which holds every native message exactly), its `messages` without their `native` and
 * `messagesWithoutNative: true`; else a 413 `turn.answer_too_large`. Nothing is lost either way:
 * the turn's message is stored before the answer is built.
 *
 * @example fitTurnAnswer({ messages, request }) // the same object when it is under 6,000,000 bytes
 */
export function fitTurnAnswer<A extends { messages: Message[]; request?: unknown }>(answer: A, maxBytes = MAX_ANSWER_BYTES): A & { messagesWithoutNative?: true } {
  const bytes = answerBytes(answer);
  if (bytes <= maxBytes) return answer;
  if (answer.request !== undefined && answer.messages.some((m) => m.native !== undefined)) {
    const slim = { ...answer, messages: answer.messages.map(withoutNative), messagesWithoutNative: true as const };
    const slimBytes = answerBytes(slim);
    if (slimBytes <= maxBytes) return slim;
    throw tooLarge(slimBytes, maxBytes);
  }
  throw tooLarge(bytes, maxBytes);
}

const tooLarge = (bytes: number, maxBytes: number) =>
  new AppError(
    "too_large",
    "turn.answer_too_large",
    `the turn's answer would be ${bytes} bytes, past the ${maxBytes} an answer may hold; the turn's message is stored: ` +
      "name a `format` (native content then comes back in `request` only), or read the active messages " +
      "in small pages (GET …/messages?view=active&limit=…)",
  );
