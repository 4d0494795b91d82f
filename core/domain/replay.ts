/**
 * What the replay shows of the active messages (docs/compaction.md, "Tool-result clearing" and
 * "Never an orphan"): a cleared TOOL result becomes a short, stable placeholder, and a tool call
 * whose result never arrived gets a placeholder result, so every call in the replay is answered.
 * Pure: the stored messages are never changed by this.
 */
import { printableToolRef } from "./fields.js";
import { newestCommitted } from "./memory-order.js";
import type { ClearedResult, Memory, Message, ToolCall } from "./model.js";
import { messageTokens } from "./tokens.js";
import { answeredCallIds, toolGroups } from "./tool-groups.js";

/**
 * The text a cleared result shows in the replay. Built only from what was stored when it was
 * cleared (tool name, size, ids), so it is byte-identical on every later turn and the prompt
 * prefix stays cacheable.
 *
 * @example clearedPlaceholder({ id: "01J…", processId: "p1" }, { toolName: "read_file", chars: 6144, tokens: 1540, at: "…" })
 * // "[tool result cleared: read_file, 6144 chars; full text: message 01J… (GET /v1/processes/p1/messages/01J…)]"
 */
export function clearedPlaceholder(message: Pick<Message, "id" | "processId">, cleared: ClearedResult): string {
  // Short on purpose: a long loop replays hundreds of these, and each one costs tokens every turn.
  const errors = cleared.errors?.length ? `; errors: ${cleared.errors.join(" | ")}` : "";
  return `[tool result cleared: ${cleared.toolName}, ${cleared.chars} chars${errors}; full text: message ${message.id} (GET /v1/processes/${message.processId}/messages/${message.id})]`;
}

/**
 * The content of the placeholder result that answers a call whose result never arrived; the name
 * and id are printed in their safe alphabet (core/domain/fields.ts).
 */
export function missingResultText(call: Pick<ToolCall, "id" | "name">): string {
  return `[no result was recorded for the ${printableToolRef(call.name)} call ${printableToolRef(call.id)}]`;
}

/** Tokens a cleared result costs in the replay: its placeholder with the per-message framing. */
export function clearedTokens(message: Pick<Message, "id" | "processId">, cleared: ClearedResult): number {
  return messageTokens({ content: clearedPlaceholder(message, cleared) });
}

/** A message as the replay shows it: a cleared result's content is its placeholder. */
export function replayed(message: Message): Message {
  if (!message.cleared) return message;
  return { ...message, content: clearedPlaceholder(message, message.cleared) };
}

/**
 * The replay of the active messages (oldest first): cleared results as placeholders, and right
 * after each ASSISTANT message with tool calls, a placeholder TOOL result (marked
 * `missingResult: true`, id `<call message id>.r<k>`) for each of its calls that no later active
 * TOOL message answers. A TOOL result whose call was folded earlier is returned as it is; the
 * client helpers send it as plain text, since no provider accepts a result without its call.
 *
 * @example replayMessages(view.messages)
 */
export function replayMessages(messages: readonly Message[]): Message[] {
  // The call ids each call message has a result for: the results of its tool group.
  const { group } = toolGroups(messages);
  const answeredAt = new Map<number, Set<string>>();
  messages.forEach((m, i) => {
    if (m.role === "ASSISTANT" && m.toolCalls) answeredAt.set(i, new Set());
    // A group starts at its call message, so that message's set exists by now.
    else if (group[i] !== i) for (const id of answeredCallIds(m)) answeredAt.get(group[i]!)?.add(id);
  });

  const out: Message[] = [];
  messages.forEach((m, i) => {
    out.push(replayed(m));
    if (m.role !== "ASSISTANT" || !m.toolCalls) return;
    const here = answeredAt.get(i)!;
    m.toolCalls.forEach((call, k) => {
      if (here.has(call.id)) return;
      here.add(call.id); // a call id repeated within one message is answered once
      const draft = {
        id: `${m.id}.r${k}`,
        processId: m.processId,
        role: "TOOL" as const,
        content: missingResultText(call),
        tags: [],
        createdAt: m.createdAt,
        archivedInMemoryId: null,
        toolCallId: call.id,
        missingResult: true as const,
      };
      out.push({ ...draft, tokens: messageTokens(draft) });
    });
  });
  return out;
}

/**
 * The active messages as the replay shows them at replay epoch `epoch`: a result cleared for a
 * later epoch waits for the fold that moves the epoch (docs/compaction.md, "Tool-result
 * clearing"), so until then it shows, and costs, its full content. `waiting`: the ids of those.
 *
 * @example clearsAt(view.messages, view.state.replayEpoch)
 */
export function clearsAt(messages: readonly Message[], epoch: number): { messages: Message[]; waiting: string[] } {
  const waiting: string[] = [];
  const shown = messages.map((m) => {
    if (!m.cleared || (m.cleared.epoch ?? 0) <= epoch) return m;
    waiting.push(m.id);
    const { cleared, ...rest } = m;
    return { ...rest, tokens: cleared.tokens };
  });
  return { messages: waiting.length > 0 ? shown : [...messages], waiting };
}

/** The newest active OK summary: the one the replay shows (two only briefly, after a race). */
export function newestSummary(view: { summaries: readonly Memory[] }): Memory | null {
  return newestCommitted(view.summaries.filter((s) => s.status === "OK"));
}

/** Tokens the replay costs: the newest summary plus every active message (estimated at append). */
export function replayTokens(view: { summaries: readonly Memory[]; messages: readonly Pick<Message, "tokens">[] }): number {
  return (newestSummary(view)?.tokens ?? 0) + view.messages.reduce((n, m) => n + m.tokens, 0);
}
