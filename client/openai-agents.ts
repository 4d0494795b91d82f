/**
 * An OpenAI Agents SDK (`@openai/agents`) `Session` backed by the service, so that
 * `run(agent, input, { session })` replays a compacted history, and every item comes back exactly
 * as the run produced it. Types only from the SDK.
 */
import type { AgentInputItem, Session } from "@openai/agents";
import type { MemoryClient } from "./memory-client.js";
import { idempotencyKey } from "./idempotency-key.js";
import type { AppendMessageInput, ModelRef } from "./input-types.js";
import type { Turn } from "./types.js";

export interface MemorySessionOptions {
  client: MemoryClient;
  processId: string;
  /** The agent's model as the service should size it: `{ name }` of a known model, or `{ contextWindow }`. */
  model: ModelRef;
}

/**
 * `getItems` is the turn's one call to the service (`beginTurn` without a message: compact if
 * needed, then the replay): the memory block as a system item, then the active messages as items,
 * each stored item exactly as `addItems` was given it. `addItems` stores what the run produced, in
 * the SDK's own item shapes (native format `openai-responses`): one model response's output items
 * (reasoning with its encrypted content, messages, function calls, hosted tool calls, compaction
 * items, anything) as one ASSISTANT message, each `function_call_result` as one TOOL message, the
 * user's items as one USER message. `popItem` and `clearSession` throw: the service never deletes.
 *
 * @example
 * const session = createMemorySession({ client: memory, processId: "frankie-42", model: { name: "gpt-4o" } });
 * const result = await run(agent, "Where were we?", { session });
 */
export function createMemorySession(options: MemorySessionOptions): Session {
  const { client, processId } = options;
  const refuse = (what: string) => () =>
    Promise.reject(new Error(`${what}: the memory service never deletes messages (compaction archives them instead)`));
  return {
    getSessionId: async () => processId,

    async getItems(limit?: number) {
      const items = toItems(await client.beginTurn(processId, { model: options.model }));
      return limit === undefined ? items : items.slice(-limit);
    },

    async addItems(items: AgentInputItem[]) {
      for (const message of toMessages(items)) await client.appendMessage(processId, message);
    },

    popItem: refuse("popItem"),
    clearSession: refuse("clearSession"),
  };
}

/**
 * The replay as Agents SDK input items: a message stored by the session (native
 * `openai-responses`) as its items exactly (a cleared result with its placeholder as output);
 * any other converted from its text. A result whose call is not in the replay (folded with an
 * older turn) becomes a user item that says what it is: the API refuses a result without its call.
 */
export function toItems(turn: Turn): AgentInputItem[] {
  const items: AgentInputItem[] = [];
  if (turn.context.block.trim() !== "") items.push({ role: "system", content: turn.context.block });
  const toolNames = new Map<string, string>();
  for (const m of turn.messages) {
    if (m.role === "TOOL" && !(m.toolCallId !== undefined && toolNames.has(m.toolCallId))) {
      items.push({ role: "user", content: `[tool result${m.toolCallId ? ` for call ${m.toolCallId}` : ""}]\n${m.content}` });
      continue;
    }
    for (const c of m.toolCalls ?? []) toolNames.set(c.id, c.name);
    if (m.native?.format === "openai-responses") {
      const stored = m.native.content as AgentInputItem[];
      items.push(...(m.cleared ? stored.map((i) => (i.type === "function_call_result" ? { ...i, output: m.content } : i)) : stored));
      continue;
    }
    switch (m.role) {
      case "SYSTEM":
        items.push({ role: "system", content: m.content });
        break;
      case "USER":
        items.push({ role: "user", content: m.content });
        break;
      case "ASSISTANT":
        if (m.content) items.push({ role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] });
        for (const c of m.toolCalls ?? []) items.push({ type: "function_call", callId: c.id, name: c.name, arguments: c.arguments, status: "completed" });
        break;
      case "TOOL":
        items.push({
          type: "function_call_result",
          callId: m.toolCallId!,
          name: toolNames.get(m.toolCallId!) ?? "",
          status: "completed",
          output: { type: "text", text: m.content },
        });
        break;
    }
  }
  return items;
}

/** Who an item is from: the user's input, a result the run sends back, or the model's output. */
function sourceOf(item: AgentInputItem): "user" | "system" | "result" | "model" {
  if ("role" in item && (item.type === undefined || item.type === "message")) {
    return item.role === "assistant" ? "model" : item.role === "system" ? "system" : "user";
  }
  // Results of tools the run executed: `function_call_result`, `computer_call_result`, `shell_call_output`, …
  return /_(result|output)$/.test(item.type ?? "") && item.type !== "tool_search_output" ? "result" : "model";
}

/**
 * Items as messages to append, each with the items as native content: the model's consecutive
 * output items (one response) as one message, each result as one, the user's consecutive items as
 * one. The service derives the role, text and tool calls from the items.
 */
export function toMessages(items: AgentInputItem[]): AppendMessageInput[] {
  const out: AppendMessageInput[] = [];
  let open: { source: "user" | "system" | "model"; items: AgentInputItem[] } | undefined;
  const close = () => {
    if (open) out.push({ native: { format: "openai-responses", content: open.items } });
    open = undefined;
  };
  for (const item of items) {
    const source = sourceOf(item);
    if (source === "result") {
      close();
      const callId = "callId" in item && typeof item.callId === "string" ? item.callId : undefined;
      out.push({
        native: { format: "openai-responses", content: [item] },
        // A resumed run may hand the same result over again: stored once.
        ...(callId ? { idempotencyKey: idempotencyKey(`tool:${callId}`) } : {}),
      });
      continue;
    }
    if (open?.source !== source) close();
    open ??= { source, items: [] };
    open.items.push(item);
  }
  close();
  return out;
}
