/**
 * From prompt size to compaction mode (docs/compaction.md, "Modes and thresholds") and each mode's verbatim anchor; the
 * prompt ratio follows api.md (`prompt.tokens`, else chars/4, else the service's own estimate).
 */
import { invalid } from "./errors.js";
import type { CompactionModeName } from "./model.js";
import { climb, MODE_POLICY } from "./mode-policy.js";
import { CHARS_PER_TOKEN, estimateTokens } from "./tokens.js";
import type { Tunables } from "./tunables.js";

export type ThresholdTunables = Pick<Tunables, "softThreshold" | "hardThreshold" | "emergencyThreshold">;
export type AnchorTunables = Pick<Tunables, "softAnchor" | "hardAnchor" | "emergencyAnchor">;

/**
 * Reaching a threshold triggers its mode (the ladder of {@link MODE_POLICY}); below soft is NONE.
 * A NaN ratio is NONE (nothing to go on, so no LLM call is spent); an infinite one is EMERGENCY.
 *
 * @example modeForRatio(0.85, DEFAULT_TUNABLES) // "HARD"
 */
export function modeForRatio(ratio: number, tunables: ThresholdTunables): CompactionModeName {
  return climb(ratio, (p) => p.threshold(tunables)) ?? "NONE";
}

/**
 * How many of the newest messages stay verbatim in `mode`. NONE anchors everything (Infinity):
 * nothing may be folded when no threshold was reached.
 */
export function anchorFor(mode: CompactionModeName, tunables: AnchorTunables): number {
  return mode === "NONE" ? Number.POSITIVE_INFINITY : MODE_POLICY[mode].anchor(tunables);
}

/** The `prompt` of a compaction request: what the engine is about to send. */
export interface PromptSize {
  tokens?: number | undefined;
  chars?: number | undefined;
  text?: string | undefined;
}

export type PromptTokenSource = "prompt.tokens" | "prompt.chars" | "prompt.text" | "estimate";

/**
 * The prompt's token count and where it came from. Precedence: `tokens` (the engine counted), then
 * `chars` (chars/4), then `text` (chars/4 of it), then `ownEstimate` (summary + active messages).
 */
export function promptTokens(
  prompt: PromptSize | undefined,
  ownEstimate: number,
): { tokens: number; source: PromptTokenSource } {
  if (prompt?.tokens !== undefined) return { tokens: prompt.tokens, source: "prompt.tokens" };
  if (prompt?.chars !== undefined) {
    return { tokens: Math.ceil(prompt.chars / CHARS_PER_TOKEN), source: "prompt.chars" };
  }
  if (prompt?.text !== undefined) return { tokens: estimateTokens(prompt.text), source: "prompt.text" };
  return { tokens: ownEstimate, source: "estimate" };
}

/**
 * `promptTokens / contextWindow`. Throws `model.context_window_invalid` for a window that is not a
 * positive number, since any ratio from it would be meaningless.
 *
 * @example promptRatio({ tokens: 60_000 }, 0, 100_000) // 0.6
 */
export function promptRatio(
  prompt: PromptSize | undefined,
  ownEstimate: number,
  contextWindow: number,
): number {
  if (!Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw invalid(
      "model.context_window_invalid",
      `contextWindow must be a positive number, got ${contextWindow}`,
      { field: "model.contextWindow" },
    );
  }
  return promptTokens(prompt, ownEstimate).tokens / contextWindow;
}
