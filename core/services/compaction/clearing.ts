/**
 * The clearing tier (docs/compaction.md, "Tool-result clearing"): older TOOL results leave the
 * replay as placeholders together with the next fold. No model call, no lease: each message is
 * cleared by its own conditional write, so a crash half way leaves a valid round that the next
 * round completes.
 */
import { clearingFrom, planClearing } from "../../domain/clearing.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { publishSafely } from "../../ports/events.js";
import { domainEvent } from "../../domain/events.js";
import type { ServiceDeps } from "../deps.js";
import { atReplayEpoch } from "./settle.js";

export interface ClearingOutcome {
  view: ActiveView;
  /** Results this call cleared for the next replay epoch (0 when the round did not run or was not worth it). */
  clearedMessages: number;
  /** The prompt now, in the caller's units: unchanged, since the round waits for the next fold. */
  tokensAfter: number;
}

/**
 * From `clearThreshold` of the window (never below `softThreshold`), clears the round
 * {@link planClearing} picks for the next replay epoch, so that the replay shows it together with
 * the next fold (docs/compaction.md, "Tool-result clearing"), and records it (metric mode `clear`,
 * one INFO line, a `ToolResultsCleared` event). Below the threshold, or when the round would free
 * too little, the view comes back unchanged.
 */
export async function clearIfNeeded(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  tunables: Tunables,
  contextWindow: number,
  tokensBefore: number,
): Promise<ClearingOutcome> {
  const unchanged = { view, clearedMessages: 0, tokensAfter: tokensBefore };
  const ratio = tokensBefore / contextWindow;
  if (!(ratio >= clearingFrom(tunables))) return unchanged;
  const settled = atReplayEpoch(view);
  const plan = planClearing(settled.messages, tunables, {
    contextWindow,
    ratio,
    at: deps.clock.now().toISOString(),
    epoch: settled.state.replayEpoch + 1,
    waiting: new Set(settled.waitingClears),
  });
  if (plan.clear.length === 0) return { ...unchanged, view: settled };

  const { cleared } = await deps.store.markCleared(
    key,
    plan.clear.map((c) => ({ id: c.message.id, cleared: c.cleared, tokens: c.tokensAfter, expectedTags: c.message.tags })),
  );
  // The replay shows the results whole until the epoch moves: the view only learns they wait.
  const after = { ...settled, waitingClears: [...(settled.waitingClears ?? []), ...cleared] };
  if (cleared.length === 0) return { ...unchanged, view: after };

  const done = new Set(cleared);
  const ours = plan.clear.filter((c) => done.has(c.message.id)); // oldest first
  const tokensFreed = ours.reduce((n, c) => n + c.message.tokens - c.tokensAfter, 0);
  deps.metrics.compaction("clear", cleared.length, tokensFreed);
  deps.log.info("tool results cleared", { processId: key.processId, messagesCleared: cleared.length, tokensFreed, fromEpoch: settled.state.replayEpoch + 1 });
  await publishSafely(
    deps,
    domainEvent("ToolResultsCleared", {
      tenantId: key.tenantId,
      processId: key.processId,
      clearedMessages: ours.length,
      tokensFreed,
      messageIds: ours.map((c) => c.message.id),
    }),
  );
  return { view: after, clearedMessages: cleared.length, tokensAfter: tokensBefore };
}
