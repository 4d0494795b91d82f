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
import type { ProcessKey } from "../ports/store.js";
import { compactForTurn } from "./compaction/turn-compaction.js";
import { cappedWindow, resolveModelWindow, type TurnWindow } from "../domain/model-windows.js";
import type { LastTurn } from "../domain/last-turn.js";
import { overWindow, type OverWindow } from "../domain/over-window.js";
import { newestSummary } from "../domain/replay.js";
import { keepTurnRecord, sinceLastTurn, turnRecord, type SinceLastTurn } from "./turn-record.js";
import { settledView } from "./compaction/settle.js";
import type { CompactionRequest } from "./compaction/compaction.js";
import { composeContext, recallBudget, type ComposedContext } from "./context.js";
import type { ServiceDeps } from "./deps.js";
import { appendMessage } from "./messages.js";
import { withNative } from "./native-content.js";
import type { ReplayFormat } from "../domain/native/formats.js";
import { replayRequest, splitReplayBlock, type ReplayRequest } from "../domain/native/replay-request.js";

export interface TurnRequest extends Omit<CompactionRequest, "force" | "instructions"> {
  message?: MessageInput;
  query?: string;
  /** The engine's request format: the answer then carries `request` (docs/turns.md). */
  format?: ReplayFormat;
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
  const view = await settledView(deps, key);
  const previous = view.state.lastTurn;
  // Loaded once for the whole turn: the window, the append (for a side channel), the compaction
  // step and recall read the same.
  let loading: Promise<Tunables> | undefined;
  const loadTunables = () => (loading ??= deps.tunables.forProcess(key.tenantId, view.state.process.projectId));
  // The window: the model's, capped by maxPromptTokens (docs/configuration.md, "Tunables").
  const window = cappedWindow(model, (await loadTunables()).maxPromptTokens);
  const contextWindow = window.tokens;
  let recorded: LastTurn | undefined;
  if (request.message) {
    const record = turnRecord(deps, view, window);
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
  const [context, since] = await Promise.all([
    composeContext(deps, key, after, { query: request.query, recallTokens, answer: messages }),
    sinceLastTurn(deps, key, previous, after),
    keepTurnRecord(deps, key, { previous, written: recorded, final: turnRecord(deps, after, window) }),
  ]);
  const over = overWindow(messages, answerTokens, contextWindow);
  const happened = { window, summaryId: newestSummary(after)?.id ?? null, ...(since ? { sinceLastTurn: since } : {}), ...(over ? { overWindow: over } : {}) };
  // The replay: cleared results as placeholders, every tool call answered (docs/compaction.md),
  // native content put back as it was sent.
  const replay = await withNative(deps, key, replayMessages(messages));
  const format = request.format;
  // Lambda answers at most 6 MB: past that, native content comes back in `request` alone, or a 413.
  return fitTurnAnswer({ compaction, ...happened, context, messages: replay, ...(format ? { request: replayRequest(format, replay, splitReplayBlock(context)) } : {}) });
}
