/**
 * A turn whose answer is still larger than its window (docs/turns.md, "A prompt larger than the
 * window"): the answer says so and why, instead of a plain 200.
 */
import type { Message } from "./model.js";

export interface OverWindow {
  /** The prompt the answer makes (the caller's unit) and the window it is larger than. */
  tokens: number;
  window: number;
  /**
   * `message_larger_than_window`: one message alone is; nothing the service may do brings it under
   * (a message is never cut), so `messageIds` names it. `not_reduced`: the turn could not bring the
   * prompt under the window; `compaction.reason` says why (a fold on its way, refused, failed).
   */
  reason: "message_larger_than_window" | "not_reduced";
  messageIds?: string[];
}

/** Why the prompt of `messages` (`promptTokens` in all) is larger than `window`; undefined when it is not. */
export function overWindow(messages: readonly Pick<Message, "id" | "tokens">[], promptTokens: number, window: number): OverWindow | undefined {
  if (promptTokens <= window) return undefined;
  const larger = messages.filter((m) => m.tokens > window).map((m) => m.id);
  return larger.length > 0
    ? { tokens: promptTokens, window, reason: "message_larger_than_window", messageIds: larger }
    : { tokens: promptTokens, window, reason: "not_reduced" };
}
