/**
 * An OpenAI Agents SDK (`@openai/agents`) `Session` backed by the service, so that
 * `run(agent, input, { session })` replays a compacted history. Types only from the SDK.
 */
import type { AgentInputItem, Session } from "@openai/agents";
import type { MemoryClient } from "./memory-client.js";
import { idempotencyKey } from "./idempotency-key.js";
import { toOpenAIMessages } from "./prompt-helpers.js";
import type { AppendMessageInput, ModelRef, ToolCall, Turn } from "./types.js";

export interface MemorySessionOptions {
  client: MemoryClient;
  processId: string;
  /** The agent's model as the service should size it: `{ name }` of a known model, or `{ contextWindow }`. */
  model: ModelRef;
}

/**
 * `getItems` is the turn's one call to the service (`beginTurn` without a message: compact if
 * needed, then the replay): the memory block as a system item, then the active messages as
 * items. `addItems` appends what the run produced: user and assistant messages, function calls
 * (with the assistant text before them, as one message) and their results. Reasoning and hosted
 * tool items are not stored. `popItem` and `clearSession` throw: the service never deletes.
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

/** The replay as Agents SDK input items. */
export function toItems(turn: Turn): AgentInputItem[] {
  const items: AgentInputItem[] = [];
  if (turn.context.block.trim() !== "") items.push({ role: "system", content: turn.context.block });
  const toolNames = new Map<string, string>();
  // The OpenAI shapes already pair tool results with their calls and turn orphans into text.
  for (const m of toOpenAIMessages({ context: { block: "", staticBlock: "", sections: [] }, messages: turn.messages })) {
    switch (m.role) {
      case "system":
      case "user":
        items.push({ role: m.role, content: m.content });
        break;
      case "assistant":
        if (m.content) items.push({ role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] });
        for (const c of m.tool_calls ?? []) {
          toolNames.set(c.id, c.function.name);
          items.push({ type: "function_call", callId: c.id, name: c.function.name, arguments: c.function.arguments, status: "completed" });
        }
        break;
      case "tool":
        items.push({
          type: "function_call_result",
          callId: m.tool_call_id,
          name: toolNames.get(m.tool_call_id) ?? "",
          status: "completed",
          output: { type: "text", text: m.content },
        });
        break;
    }
  }
  return items;
}

/** Items as messages to append; an assistant message and the function calls right after it become one. */
export function toMessages(items: AgentInputItem[]): AppendMessageInput[] {
  const out: AppendMessageInput[] = [];
  let open: { content: string; toolCalls: ToolCall[] } | undefined;
  const close = () => {
    if (open) out.push({ role: "ASSISTANT", content: open.content, ...(open.toolCalls.length ? { toolCalls: open.toolCalls } : {}) });
    open = undefined;
  };
  for (const item of items) {
    if (item.type === "function_call") {
      open ??= { content: "", toolCalls: [] };
      open.toolCalls.push({ id: item.callId, name: item.name, arguments: item.arguments });
      continue;
    }
    if (item.type === undefined || item.type === "message") {
      if (!("role" in item)) continue;
      close();
      if (item.role === "assistant") {
        open = { content: item.content.map((p) => (p.type === "output_text" ? p.text : p.type === "refusal" ? p.refusal : `[${p.type}]`)).join(""), toolCalls: [] };
      } else if (item.role === "user") {
        out.push({ role: "USER", content: typeof item.content === "string" ? item.content : item.content.map(partText).join("\n") });
      } else if (item.role === "system") {
        out.push({ role: "SYSTEM", content: item.content });
      }
      continue;
    }
    close();
    if (item.type === "function_call_result") {
      out.push({
        role: "TOOL",
        content: resultText(item.output),
        toolCallId: item.callId,
        // A resumed run may hand the same result over again: stored once.
        idempotencyKey: idempotencyKey(`tool:${item.callId}`),
      });
    }
    // Reasoning, hosted tool calls and other provider items have no place in the chat record.
  }
  close();
  return out;
}

type UserPart = Exclude<Extract<AgentInputItem, { role: "user" }>["content"], string>[number];
const partText = (p: UserPart): string => (p.type === "input_text" ? p.text : `[${p.type}]`);

function resultText(output: Extract<AgentInputItem, { type: "function_call_result" }>["output"]): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map((p) => ("text" in p && typeof p.text === "string" ? p.text : `[${p.type}]`)).join("\n");
  return output.type === "text" ? output.text : `[${output.type}]`;
}
