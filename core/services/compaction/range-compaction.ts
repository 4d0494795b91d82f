/**
 * Range compaction (docs/compaction.md, "Range jobs"): folds the active messages of a time
 * window (an accepted offer, run by the worker, or `POST .../compaction/range`) and leaves a
 * SYSTEM marker, through the commit protocol (./commit.ts).
 */
import { invalid } from "../../domain/errors.js";
import { rangeMarker, selectRange, type RangeRequest } from "../../domain/range.js";
import { newestSummary, replayTokens } from "../../domain/replay.js";
import { withPriorSummaryFloor } from "../../domain/summarizer-fit.js";
import { messageTokens } from "../../domain/tokens.js";
import type { ProcessKey } from "../../ports/store.js";
import { foldAndCommit } from "./commit.js";
import type { FoldOptions } from "./compaction.js";
import type { ServiceDeps } from "../deps.js";
import type { BudgetRefusal, FoldRefusal } from "../../domain/fold/refusal.js";
import { settledView } from "./settle.js";

export type { RangeRequest };

export interface RangeResult {
  memoryId: string | null;
  compactedMessages: number;
  markerMessageId: string | null;
  reason?: string;
  /** Why the tenant's daily budget refused the fold (with `reason: "budget_exceeded"`). */
  budget?: BudgetRefusal;
}

/**
 * Folds the active messages created in [from, to] (pinned ones stay, and so does a tool
 * group that reaches outside the range), chains the prior summary, and inserts a SYSTEM marker
 * tagged `RECOMPACTION:<topicLabel>` ordered right after the range's last message.
 */
export async function compactRange(deps: ServiceDeps, key: ProcessKey, range: RangeRequest): Promise<RangeResult> {
  const { refusal: _refusal, ...result } = await foldRange(deps, key, range);
  return result;
}

/** {@link compactRange}, optionally as a queued job's row, with the typed refusal of a fold that did not land (for the worker). */
export async function foldRange(
  deps: ServiceDeps,
  key: ProcessKey,
  range: RangeRequest,
  options: Pick<FoldOptions, "queuedFoldId"> = {},
): Promise<RangeResult & { refusal?: FoldRefusal }> {
  if (Date.parse(range.from) > Date.parse(range.to)) {
    throw invalid("range.invalid", "from must not be after to", { fields: ["body.from"] });
  }
  const view = await settledView(deps, key);
  // No model window is known here: the budget holds at least the summary this fold chains, as far
  // as the summarizer's window allows (a summarizer that cannot be built fails the fold later).
  const summarizerWindow = await deps.summarizer().then((s) => s.contextWindow, () => undefined);
  const tunables = withPriorSummaryFloor(
    await deps.tunables.forProcess(key.tenantId, view.state.process.projectId),
    newestSummary(view)?.tokens ?? 0,
    summarizerWindow,
  );
  // A range job names no model: it keeps to the fold unit of the model the last turn named.
  const fold = selectRange(view.messages, range, view.state.lastTurn?.foldUnit ?? "tool_group");
  if (fold.length === 0) return { memoryId: null, compactedMessages: 0, markerMessageId: null, reason: "nothing_in_range" };

  // The marker follows the range's last message that may fold (the triggering turn never does).
  const marker = rangeMarker(view.messages, range, fold.length, key.processId)!;
  const tokensBefore = replayTokens(view);
  const outcome = await foldAndCommit(deps, key, view, tunables, {
    fold,
    mode: "RANGE",
    whole: true,
    topicLabel: range.topicLabel,
    tokensBefore,
    metadata: { recompaction: true, topicLabel: range.topicLabel, rangeFromAt: range.from, rangeToAt: range.to, markerMessageId: marker.id },
    marker: { ...marker, tokens: messageTokens(marker) },
    ...(options.queuedFoldId ? { memoryId: options.queuedFoldId, fromFold: "QUEUED" as const, producedBy: "worker" as const } : {}),
  });
  if (!outcome.ok) {
    return {
      memoryId: outcome.memoryId ?? null,
      compactedMessages: 0,
      markerMessageId: null,
      reason: outcome.reason,
      refusal: outcome.refusal,
      ...(outcome.budget ? { budget: outcome.budget } : {}),
    };
  }
  return { memoryId: outcome.memory.id, compactedMessages: fold.length, markerMessageId: marker.id };
}
