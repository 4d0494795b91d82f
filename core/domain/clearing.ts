/**
 * Tool-result clearing (docs/compaction.md, "Tool-result clearing"): which older TOOL results the
 * replay shows as placeholders instead of their content. No model call: the stored message keeps
 * its full content, and only the replay changes.
 */
import { printableToolRef } from "./fields.js";
import { anchorFor, modeForRatio } from "./mode.js";
import type { ClearedResult, Message } from "./model.js";
import { resultErrors } from "./ledger/scan.js";
import { classifyCall } from "./ledger/tools.js";
import { clearedTokens } from "./replay.js";
import { effectiveStrength } from "./strength.js";
import { toolGroups } from "./tool-groups.js";
import type { Tunables } from "./tunables.js";

export type ClearingTunables = Pick<
  Tunables,
  | "keepToolResults"
  | "clearMinResultTokens"
  | "clearMinSaving"
  | "clearThreshold"
  | "softThreshold"
  | "hardThreshold"
  | "emergencyThreshold"
  | "softAnchor"
  | "hardAnchor"
  | "emergencyAnchor"
>;

/** Where the round stands: the window, the prompt's share of it before clearing, and the time it records. */
export interface ClearingContext {
  contextWindow: number;
  /** Prompt tokens / window before clearing: decides whether the round runs and the mode's anchor. */
  ratio: number;
  at: string;
  /** The replay epoch the round takes effect at: the next one (it waits for the next fold). */
  epoch: number;
  /** Results already cleared for a later epoch (shown whole until then): not cleared again. */
  waiting?: ReadonlySet<string>;
}

/** Named in a placeholder when the result's call is no longer active (folded earlier). */
export const UNKNOWN_TOOL = "a tool";

export interface ClearCandidate {
  message: Message;
  cleared: ClearedResult;
  /** What the message costs in the replay once cleared (its placeholder). */
  tokensAfter: number;
}

export interface ClearingPlan {
  /** Results to clear, oldest first; empty when the round is not worth it. */
  clear: ClearCandidate[];
  /** Replay tokens the round frees. */
  tokensFreed: number;
  /** Why nothing is cleared; absent when `clear` is not empty. */
  reason?: "below_threshold" | "nothing_clearable" | "below_min_saving";
}

/**
 * The ratio from which clearing runs: `clearThreshold`, never below `softThreshold` (a layer stored
 * before the two were checked against each other may still hold a lower one; docs/compaction.md,
 * "Tool-result clearing").
 */
export const clearingFrom = (t: Pick<Tunables, "clearThreshold" | "softThreshold">): number => Math.max(t.clearThreshold, t.softThreshold);

/**
 * The clearing round for the active messages (oldest first), from {@link clearingFrom} of the
 * window: every TOOL result the model has read and still would not miss, that is one older than the
 * last ASSISTANT message (a result after it has not been answered yet), outside the anchor of the
 * mode the prompt is in and outside the newest `keepToolResults`, not pinned or strong, not cleared
 * yet, holding at least `clearMinResultTokens`, and smaller once cleared. The round is all of them
 * or nothing: it must free at least `clearMinSaving` x `contextWindow` tokens (a batch, never one
 * result per turn, since every round changes the prompt prefix and costs a cache write).
 *
 * The round is recorded for the next replay epoch (`context.epoch`): the replay keeps showing the
 * results whole until a fold moves the epoch on, so the prompt changes once per fold.
 *
 * @example planClearing(view.messages, tunables, { contextWindow: 128_000, ratio: 0.7, at: new Date().toISOString(), epoch: 1 })
 */
export function planClearing(messages: readonly Message[], tunables: ClearingTunables, context: ClearingContext): ClearingPlan {
  const { contextWindow, ratio, at, epoch } = context;
  // `!(>=)`: a NaN ratio gives nothing to go on, so nothing is cleared.
  if (!(ratio >= clearingFrom(tunables))) return { clear: [], tokensFreed: 0, reason: "below_threshold" };
  const anchorStart = messages.length - Math.min(messages.length, anchorFor(modeForRatio(ratio, tunables), tunables));
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "ASSISTANT") {
      lastAssistant = i;
      break;
    }
  }
  const results = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === "TOOL");
  const older = results
    .slice(0, Math.max(0, results.length - tunables.keepToolResults))
    .filter(({ i }) => i < lastAssistant && i < anchorStart);
  const { group } = toolGroups(messages);
  const clear: ClearCandidate[] = [];
  for (const { m, i } of older) {
    if (m.cleared || context.waiting?.has(m.id) || m.tokens < tunables.clearMinResultTokens) continue;
    const strength = effectiveStrength(m);
    if (strength === "pinned" || strength === "strong") continue;
    // The call message this result answers (itself when its call was folded earlier).
    const owner = messages[group[i]!]!;
    // The placeholder prints the name: in its safe alphabet, whatever was stored before the check.
    const call = owner.toolCalls?.find((c) => c.id === m.toolCallId);
    const toolName = call ? printableToolRef(call.name) : UNKNOWN_TOOL;
    // What failed stays in the placeholder (docs/evidence-ledger.md, "What it keeps").
    const kind = call ? classifyCall(call)?.kind : undefined;
    const errors = resultErrors(kind === "read" || kind === "search", m.content, false);
    const cleared: ClearedResult = { at, toolName, chars: m.content.length, tokens: m.tokens, epoch, ...(errors.length > 0 ? { errors } : {}) };
    const tokensAfter = clearedTokens(m, cleared);
    if (tokensAfter < m.tokens) clear.push({ message: m, cleared, tokensAfter });
  }
  const tokensFreed = clear.reduce((n, c) => n + c.message.tokens - c.tokensAfter, 0);
  if (clear.length === 0) return { clear: [], tokensFreed: 0, reason: "nothing_clearable" };
  if (tokensFreed < tunables.clearMinSaving * contextWindow) return { clear: [], tokensFreed: 0, reason: "below_min_saving" };
  return { clear, tokensFreed };
}
