/**
 * One engine turn in one request: append the turn's message (if any), compact if needed (in the
 * background by default: docs/compaction.md), compose the context, return the active messages.
 * Without a compaction it costs one strongly consistent Query plus the append's one transaction
 * (and, for workers, the parent lookup).
 */
import { fitTurnAnswer } from "../domain/answer-size.js";
import type { Message } from "../domain/model.js";
import type { CompactionResult } from "../domain/compaction-result.js";
import { replayMessages } from "../domain/replay.js";
import type { MessageInput } from "../domain/fields.js";
import type { Tunables } from "../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { epochSince, prefixVerdict, promptCacheKey, replayMark, type PrefixAnswer } from "../domain/prefix.js";
import { awaitingToolResults, recallMessage, recalledIds } from "../domain/recall.js";
import { compactForTurn } from "./compaction/turn-compaction.js";
import { cappedWindow, foldRulesFor, resolveModelWindow, type TurnWindow } from "../domain/model-windows.js";
import type { LastTurn } from "../domain/last-turn.js";
import { overWindow, type OverWindow } from "../domain/over-window.js";
import { newestSummary } from "../domain/replay.js";
import { keepTurnRecord, sinceLastTurn, turnRecord, type SinceLastTurn } from "./turn-record.js";
import { settledView } from "./compaction/settle.js";
import type { CompactionRequest } from "./compaction/compaction.js";
import { RECALL_HEADING, composeContext, findRecall, outOfPromptIds, recallBudget, type ComposedContext } from "./context.js";
import type { ServiceDeps } from "./deps.js";
import { appendMessage } from "./messages.js";
import { withBlock, withNative } from "./native-content.js";
import type { ReplayFormat } from "../domain/native/formats.js";
import { replayRequest, splitReplayBlock, type ReplayRequest } from "../domain/native/replay-request.js";
import { openLoopTurn } from "../domain/native/replay-rules.js";
import { blockReplay, blockRequest, type BlockReplay } from "../domain/native/block-request.js";
import { recordBlockRefused, type BlockRefusal } from "./provider-block.js";

export interface TurnRequest extends Omit<CompactionRequest, "force" | "instructions"> {
  message?: MessageInput;
  query?: string;
  /** The engine's request format: the answer then carries `request` (docs/turns.md). */
  format?: ReplayFormat;
  /** The provider refused the block the previous request led with (docs/turns.md, "The provider's block"). */
  blockRefused?: BlockRefusal;
}

export interface TurnResult {
  compaction: CompactionResult;
  /** The window the turn used (docs/turns.md, "The window the turn used"). */
  window: TurnWindow;
  /** The summary the answer replays (null: none). */
  summaryId: string | null;
  /** Folds committed since the process's previous turn; absent on its first recorded turn. */
  sinceLastTurn?: SinceLastTurn;
  /** The prompt the answer makes is still larger than the window, and why. */
  overWindow?: OverWindow;
  context: ComposedContext;
  messages: Message[];
  /** The part of the engine's request body the service owns, when the turn named a `format`. */
  request?: ReplayRequest;
  /**
   * Whether this turn's prompt starts with the previous turn's, and if not why (docs/turns.md,
   * "Append-only between folds").
   */
  prefix: PrefixAnswer;
  /** How `request` replays a summary that holds a provider's block (docs/turns.md, "The provider's block"). */
  providerBlock?: BlockReplay;
  /** True when the answer would pass Lambda's 6 MB with native content twice: `messages` then leave it to `request`. */
  messagesWithoutNative?: true;
}

/**
 * One engine turn (docs/turns.md): appends `request.message` (idempotent by its id), runs the
 * turn's compaction step (in the background mode it never calls a summarizer: it commits a
 * prepared fold or queues one, and trims the answer below the emergency threshold), and returns
 * the memory block and the active messages to send. A 400 (unknown model window) writes nothing.
 *
 * @example
 * const deps = createDeps();
 * const { context, messages, compaction } = await runTurn(deps, { tenantId: "acme", processId: "p-1" }, {
 *   message: { role: "USER", content: "Next step?" },
 *   model: { name: "gpt-4o" },
 *   prompt: { tokens: 91_000 },
 * });
 * // send context.block as the system prompt and `messages` as the conversation;
 * // compaction.reason says what happened ("compaction_queued", "reverted_recently", ...)
 */
export async function runTurn(deps: ServiceDeps, key: ProcessKey, request: TurnRequest): Promise<TurnResult> {
  const model = resolveModelWindow(request.model); // a 400 before anything is written
  // Noted before the view is read, so that this turn already replays the readable summary.
  if (request.blockRefused) await recordBlockRefused(deps, key, request.blockRefused);
  const startedAt = deps.clock.now().toISOString();
  const view = await settledView(deps, key);
  const previous = view.state.lastTurn;
  // The model's rules (docs/turns.md, "What a fold may keep"): the record, the replay and its mark read them.
  const rules = foldRulesFor(request.model.name);
  // Loaded once for the whole turn: the window, the append (for a side channel), the compaction
  // step and recall read the same.
  let loading: Promise<Tunables> | undefined;
  const loadTunables = () => (loading ??= deps.tunables.forProcess(key.tenantId, view.state.process.projectId));
  // The window: the model's, capped by maxPromptTokens (docs/configuration.md, "Tunables").
  const window = cappedWindow(model, (await loadTunables()).maxPromptTokens);
  const contextWindow = window.tokens;
  let recorded: LastTurn | undefined;
  if (request.message) {
    // The mark is the last turn's until this answer is made: a turn that changes nothing writes once.
    const record = turnRecord(deps, view, window, previous?.replay, rules.foldUnit);
    const { message, created } = await appendMessage(deps, key, request.message, {
      hasUserMessage: async () => view.state.hasUserMessage,
      sideChannel: async () => (await loadTunables()).sideChannelEnabled,
      lastTurn: record,
    });
    if (created) recorded = record;
    if (created || !view.messages.some((m) => m.id === message.id)) {
      if (message.role === "USER") view.state.hasUserMessage = true;
      if (message.archivedInMemoryId === null) view.messages.push(message);
    }
  }
  const tunables = await loadTunables();
  const { view: after, messages, answerTokens, ...compaction } = await compactForTurn(deps, key, request, { view, tunables, contextWindow });
  // Recall fills the room left below the hard threshold (below the emergency one after a trim), up
  // to recallMaxTokens, and reaches the messages a trim left out.
  const recallTokens = request.query?.trim() ? recallBudget(tunables, contextWindow, answerTokens, compaction.trimmed !== undefined) : 0;
  // Recall goes where it was recalled, as a message of the transcript, unless the settings put it
  // in the system prompt (docs/turns.md, "Recall").
  if (!tunables.recallInSystem && recallTokens > 0) await recallIntoTranscript(deps, key, after, { query: request.query, recallTokens, answer: messages });
  const [context, since] = await Promise.all([
    composeContext(deps, key, after, tunables.recallInSystem ? { query: request.query, recallTokens, answer: messages } : {}),
    sinceLastTurn(deps, key, previous, after),
  ]);
  const over = overWindow(messages, answerTokens, contextWindow);
  const happened = { window, summaryId: newestSummary(after)?.id ?? null, ...(since ? { sinceLastTurn: since } : {}), ...(over ? { overWindow: over } : {}) };
  // The replay: cleared results as placeholders, every tool call answered (docs/compaction.md),
  // native content put back as it was sent.
  const replay = await withNative(deps, key, replayMessages(messages));
  const format = request.format;
  const block = splitReplayBlock(context);
  // A provider's block in its format and model family stands for the summary, and the kept turns
  // keep their reasoning (docs/turns.md, "The provider's block").
  const head = newestSummary(after);
  const providerBlock = blockReplay(head, format, request.model.name);
  const viaBlock = providerBlock?.sent === true;
  // What the replay keeps of the turns a fold kept, by the model's rules: the reasoning of answers
  // to a prompt of an earlier epoch no longer holds (docs/turns.md, "What a fold may keep").
  const epochBegan = epochSince(previous?.replay, after.state.replayEpoch, startedAt);
  const options = {
    ...(!viaBlock && epochBegan && rules.reasoningBeforeSummary === "strip" ? { stripReasoningBefore: epochBegan } : {}),
    // A summary the service wrote goes after the turns it kept where the model wants it so.
    ...(!viaBlock && epochBegan && head && rules.summary === "after_kept" && format === "openai-responses" ? { blockAfter: epochBegan } : {}),
    ...(!viaBlock && rules.explicitCacheBreakpoint && format === "openai-responses" ? { explicitBreakpoint: true } : {}),
    cacheKey: promptCacheKey(key),
  };
  const mark = replayMark({
    epoch: after.state.replayEpoch,
    format: `${format ?? "plain"}${viaBlock ? "/block" : ""}${options.stripReasoningBefore ? "/strip-reasoning" : ""}${options.blockAfter ? "/summary-after" : ""}${options.explicitBreakpoint ? "/breakpoint" : ""}`,
    staticBlock: viaBlock ? "" : block.staticBlock,
    systemRecall: tunables.recallInSystem && !viaBlock ? block.dynamicBlock : "",
    trimmed: compaction.trimmed,
    replay,
    since: epochBegan,
  });
  const verdict = prefixVerdict(previous?.replay, mark, after.state.replayReason);
  const prefix: PrefixAnswer = verdict.reason === "format" && providerBlock?.reason === "refused" && previous?.replay?.format.includes("/block") ? { kept: false, reason: "block_refused" as const } : verdict;
  // Where the fold was cut relative to an unfinished tool loop (docs/turns.md, "What a fold may keep").
  const openLoop = format === "anthropic" ? openLoopTurn(replay, format, options.stripReasoningBefore) : undefined;
  if (openLoop) prefix.openLoop = { messageId: openLoop.id };
  // The record keeps the mark; written only when it differs from what the process holds.
  await keepTurnRecord(deps, key, { previous, written: recorded, final: turnRecord(deps, after, window, mark, rules.foldUnit) });
  // Lambda answers at most 6 MB: past that, native content comes back in `request` alone, or a 413.
  return fitTurnAnswer({
    compaction,
    ...happened,
    context,
    messages: replay,
    prefix,
    ...(format ? { request: viaBlock ? blockRequest(format, replay, await withBlock(deps, key, head!), options) : replayRequest(format, replay, block, options) } : {}),
    ...(providerBlock ? { providerBlock } : {}),
  });
}

/**
 * Recall as a message (docs/turns.md, "Recall"): the archived, cleared or trimmed-out messages
 * that match the query and that no recall message in the prompt quotes yet, appended as one
 * SYSTEM message after everything the answer holds, and added to it. Not while the newest tool
 * call waits for its results: the message would stand between the call and them.
 */
async function recallIntoTranscript(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  o: { query: string | undefined; recallTokens: number; answer: Message[] },
): Promise<void> {
  if (awaitingToolResults(o.answer)) return;
  const lines = await findRecall(deps, key, o.query, {
    budgetTokens: o.recallTokens,
    summary: newestSummary(view)?.content ?? null,
    outOfPromptIds: outOfPromptIds(view, o.answer),
    shownIds: recalledIds(o.answer),
  });
  if (lines.length === 0) return;
  const { message } = await appendMessage(deps, key, recallMessage(lines, RECALL_HEADING), {
    hasUserMessage: async () => true,
    sideChannel: async () => false,
  });
  o.answer.push(message);
  // The answer may be the view's own list (nothing trimmed): the view learns of the message once.
  if (view.messages !== o.answer) view.messages.push(message);
}
