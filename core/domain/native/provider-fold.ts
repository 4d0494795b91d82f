/**
 * What a provider fold sends (docs/summarizers.md, "Provider folds"): the folded messages in the
 * provider's own format, native content exactly as stored and the rest converted as a replay
 * converts it, after the block of the memory the fold chains from. Pure.
 */
import type { Message } from "../model.js";
import type { SummarizeInput, SummarySourceMessage } from "../../ports/summarizer.js";
import type { JsonObject } from "./formats.js";
import { CONTINUATION_TEXT, replayRequest } from "./replay-request.js";

const NO_BLOCK = { staticBlock: "", dynamicBlock: "" };
/** Opens the text a prior summary without a block is sent as. */
export const PRIOR_SUMMARY_LEAD = "Summary of the earlier conversation:";

/**
 * A source message as the replay's converters read it. A SYSTEM message (a range marker, an
 * engine's note) is sent as user text: the request's `system` stays the engine's, byte for byte.
 */
function asMessage(m: SummarySourceMessage): Message {
  const system = m.role === "SYSTEM" && !m.native;
  return {
    id: m.id,
    processId: "",
    role: system ? "USER" : m.role,
    content: system ? `[system] ${m.content}` : m.content,
    tags: [],
    createdAt: m.createdAt,
    archivedInMemoryId: null,
    tokens: 0,
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(m.native ? { native: m.native } : {}),
  };
}

/** The prior summary, when it has no block of this format, as the conversation's first user turn. */
const priorText = (input: SummarizeInput) => (input.priorSummary?.trim() ? `${PRIOR_SUMMARY_LEAD}\n${input.priorSummary}` : null);

/**
 * The `messages` of an Anthropic compaction request: the prior block's message first (in place
 * of the turns it summarized), else the prior summary as a user turn, then the fold's messages.
 */
export function anthropicFoldMessages(input: SummarizeInput): JsonObject[] {
  const built = replayRequest("anthropic", input.messages.map(asMessage), NO_BLOCK, { newestBreakpoint: false }) as { messages: JsonObject[] };
  let messages = built.messages;
  const prior = input.providerFold?.priorNative;
  const head: JsonObject[] = [];
  if (prior?.format === "anthropic") head.push({ role: "assistant", content: prior.content as JsonObject[] });
  else if (priorText(input)) head.push({ role: "user", content: [{ type: "text", text: priorText(input)! }] });
  // The converter's stand-in user turn is for a replay without anything before; here there is.
  if (head.length > 0 && isContinuation(messages[0])) messages = messages.slice(1);
  return [...head, ...messages];
}

const isContinuation = (m: JsonObject | undefined) =>
  Array.isArray(m?.content) && m.content.length === 1 && (m.content[0] as JsonObject)?.text === CONTINUATION_TEXT;

/**
 * The `input` of a `/responses/compact` request: the prior window as it was returned, else the
 * prior summary as a user message, then the fold's messages.
 */
export function responsesFoldItems(input: SummarizeInput): JsonObject[] {
  const built = replayRequest("openai-responses", input.messages.map(asMessage), NO_BLOCK) as { input: JsonObject[] };
  const prior = input.providerFold?.priorNative;
  const head: JsonObject[] =
    prior?.format === "openai-responses" ? (prior.content as JsonObject[]) : priorText(input) ? [{ role: "user", content: priorText(input)! }] : [];
  return [...head, ...built.input];
}

/** The role a message has in an Anthropic conversation. */
const anthropicRole = (m: Pick<Message, "role">) => (m.role === "ASSISTANT" ? "assistant" : "user");

/**
 * The longest head of `fold` an Anthropic compaction may take when `next` is the first message
 * kept after it: no tool call in the head whose result comes later (each call and its result on
 * one side of the cut), and a last folded message whose role differs from the first kept one,
 * which the API would otherwise merge into the summary ("Compaction that keeps recent turns",
 * "Compaction and preserved thinking"). `answeredLater`: calls a kept message answers. Empty when
 * no cut of the fold qualifies.
 *
 * @example anthropicCut([user, assistantCall, toolResult], userText) // [user] — the result and a user turn would meet at the cut
 */
export function anthropicCut(fold: readonly Message[], next: Pick<Message, "role"> | undefined, answeredLater: ReadonlySet<string> = new Set()): Message[] {
  const answeredAt = new Map<string, number>();
  fold.forEach((m, i) => {
    for (const id of [m.toolCallId, ...(m.toolCallIds ?? [])]) if (id !== undefined) answeredAt.set(id, i);
  });
  // Where each head would leave a call whose result is folded after it (or kept: not in the fold, unknown here).
  let openUntil = 0;
  const splits = new Array<boolean>(fold.length + 1).fill(false);
  fold.forEach((m, i) => {
    for (const c of m.toolCalls ?? []) openUntil = Math.max(openUntil, answeredLater.has(c.id) ? fold.length : (answeredAt.get(c.id) ?? i));
    splits[i + 1] = openUntil > i;
  });
  for (let c = fold.length; c > 0; c--) {
    const after = c < fold.length ? fold[c] : next;
    if (!splits[c] && (after === undefined || anthropicRole(after) !== anthropicRole(fold[c - 1]!))) return fold.slice(0, c);
  }
  return [];
}
