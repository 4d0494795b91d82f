/**
 * The clearing tier (docs/compaction.md, "Tool-result clearing"): before anything is summarized,
 * older TOOL results leave the replay as placeholders. No model call, no lease: each message is
 * cleared by its own conditional write, so a crash half way leaves a valid, smaller replay.
 */
import { clearingFrom, planClearing } from "../../domain/clearing.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { publishSafely } from "../../ports/events.js";
import { replayTokens } from "../../domain/replay.js";
import { domainEvent } from "../../domain/events.js";
import type { ServiceDeps } from "../deps.js";
import { settledView } from "./settle.js";

export interface ClearingOutcome {
  view: ActiveView;
  /** Results this call cleared (0 when the round did not run or was not worth it). */
  clearedMessages: number;
  /** The prompt after clearing, in the caller's units (scaled like a fold's `tokensAfter`). */
  tokensAfter: number;
}

/**
 * From `clearThreshold` of the window (never below `softThreshold`), clears the round
 * {@link planClearing} picks and records it (metric mode `clear`, one INFO line, a
 * `ToolResultsCleared` event). Below the threshold, or when the round would free too little, the
 * view comes back unchanged.
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
  const plan = planClearing(view.messages, tunables, { contextWindow, ratio, at: deps.clock.now().toISOString() });
  if (plan.clear.length === 0) return unchanged;

  const before = replayTokens(view);
  const { cleared, skipped } = await deps.store.markCleared(
    key,
    plan.clear.map((c) => ({ id: c.message.id, cleared: c.cleared, tokens: c.tokensAfter, expectedTags: c.message.tags })),
  );
  let after: ActiveView;
  if (skipped.length > 0) {
    // A concurrent round or fold got there first: read what actually stands, its roll-forward done.
    after = await settledView(deps, key);
  } else {
    const done = new Map(plan.clear.map((c) => [c.message.id, c]));
    after = {
      ...view,
      messages: view.messages.map((m) => {
        const c = done.get(m.id);
        return c ? { ...m, cleared: c.cleared, tokens: c.tokensAfter } : m;
      }),
    };
  }
  if (cleared.length === 0) return { ...unchanged, view: after };

  const done = new Set(cleared);
  const ours = plan.clear.filter((c) => done.has(c.message.id)); // oldest first
  const tokensFreed = ours.reduce((n, c) => n + c.message.tokens - c.tokensAfter, 0);
  const now = replayTokens(after);
  const tokensAfter = before > 0 ? Math.round((tokensBefore * now) / before) : tokensBefore;
  deps.metrics.compaction("clear", cleared.length, tokensFreed);
  deps.log.info("tool results cleared", { processId: key.processId, messagesCleared: cleared.length, tokensFreed });
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
  return { view: after, clearedMessages: cleared.length, tokensAfter };
}
