/**
 * The text projection of native content (docs/api.md, "Native content"): the role the content
 * decides, its readable text, its tool calls and the calls it answers. Search, summaries, token
 * estimates, selection, the loss report and the inspector read the projection; reasoning
 * (thinking, encrypted reasoning, thought signatures) is never part of it and never reaches a
 * summarizer. Pure and linear in the size of the content.
 */
import { LONE_SURROGATES, printableToolRef } from "../tool-ref.js";
import type { Role, ToolCall } from "../model.js";
import { isObject, type Json, type JsonObject, type NativeFormat } from "./formats.js";

export interface Projection {
  /** The role the content decides, or undefined where only the caller can say (text alone). */
  role?: Role;
  /** The readable text: text parts, tool results, labels for media and provider items. */
  text: string;
  toolCalls: ToolCall[];
  /** The calls the content answers (tool results), in order. */
  toolCallIds: string[];
  /** Characters of reasoning the model reads back (thinking, signatures, encrypted content). */
  reasoningChars: number;
  /** Images, documents and files: what a turn costs for them is not their bytes. */
  mediaParts: number;
}

interface Draft extends Projection {
  texts: string[];
  saw: { assistant: boolean; user: boolean; system: boolean; results: number; other: number };
}

const newDraft = (): Draft => ({
  text: "",
  texts: [],
  toolCalls: [],
  toolCallIds: [],
  reasoningChars: 0,
  mediaParts: 0,
  saw: { assistant: false, user: false, system: false, results: 0, other: 0 },
});


const str = (v: Json | undefined): string => (typeof v === "string" ? v : "");
const ref = (v: string) => printableToolRef(v).slice(0, 256);
const json = (v: Json | undefined) => (typeof v === "string" ? v : JSON.stringify(v ?? {}));

/**
 * Projects `content` of `format`.
 *
 * @example projectNative("anthropic", [{ type: "thinking", thinking: "…", signature: "s" }, { type: "text", text: "Hi" }])
 * // { role: "ASSISTANT", text: "Hi", toolCalls: [], toolCallIds: [], reasoningChars: 2, mediaParts: 0 }
 */
export function projectNative(format: NativeFormat, content: readonly unknown[]): Projection {
  const d = newDraft();
  const each = PROJECTORS[format];
  for (const element of content) if (isObject(element as Json)) each(element as JsonObject, d);
  return finish(d);
}

function finish(d: Draft): Projection {
  const { saw } = d;
  let role: Role | undefined;
  if (saw.assistant || d.toolCalls.length > 0) role = "ASSISTANT";
  else if (saw.results > 0 && !saw.user && d.texts.length === saw.results && saw.other === 0) role = "TOOL";
  else if (saw.results > 0 || saw.user) role = "USER";
  else if (saw.system) role = "SYSTEM";
  return {
    ...(role ? { role } : {}),
    text: d.texts.filter((t) => t !== "").join("\n").replace(LONE_SURROGATES, "\uFFFD"), // stored as DynamoDB text, which holds no lone surrogate
    toolCalls: d.toolCalls,
    toolCallIds: d.toolCallIds,
    reasoningChars: d.reasoningChars,
    mediaParts: d.mediaParts,
  };
}

function label(d: Draft, what: string) {
  d.texts.push(`[${what}]`);
}

function media(d: Draft, what: string) {
  d.mediaParts++;
  label(d, what);
}

/** Text of a tool result's content: a string, or parts of which text is read and the rest labelled. */
function resultText(value: Json | undefined, d: Draft): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return value === undefined ? "" : JSON.stringify(value);
  const parts: string[] = [];
  for (const p of value) {
    if (!isObject(p)) continue;
    const text = p.text ?? p.value;
    if (typeof text === "string") parts.push(text);
    else {
      d.mediaParts++;
      parts.push(`[${str(p.type) || "part"}]`);
    }
  }
  return parts.join("\n");
}

function result(d: Draft, callId: string, text: string) {
  d.saw.results++;
  d.toolCallIds.push(ref(callId));
  d.texts.push(text);
}

const PROJECTORS: Record<NativeFormat, (e: JsonObject, d: Draft) => void> = {
  anthropic(b, d) {
    switch (b.type) {
      case "text":
        d.texts.push(str(b.text));
        return;
      case "thinking":
        d.saw.assistant = true;
        d.reasoningChars += str(b.thinking).length + str(b.signature).length;
        return;
      case "redacted_thinking":
        d.saw.assistant = true;
        d.reasoningChars += str(b.data).length;
        return;
      case "tool_use":
        d.toolCalls.push({ id: ref(str(b.id)), name: ref(str(b.name)), arguments: json(b.input) });
        return;
      case "tool_result":
        result(d, str(b.tool_use_id), resultText(b.content, d));
        return;
      case "image":
        media(d, "image");
        return;
      case "document":
        media(d, "document");
        return;
      default:
        // Server tool calls and their results, and whatever a provider adds later: the model's
        // own items, labelled so a reader sees they were there.
        d.saw.assistant ||= str(b.type) === "server_tool_use" || str(b.type).endsWith("_tool_result");
        d.saw.other++;
        label(d, str(b.type));
    }
  },

  "openai-responses"(item, d) {
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message": {
        const role = str(item.role);
        if (role === "assistant") d.saw.assistant = true;
        else if (role === "system" || role === "developer") d.saw.system = true;
        else d.saw.user = true;
        d.texts.push(resultText(item.content, d));
        return;
      }
      case "reasoning":
        d.saw.assistant = true;
        d.reasoningChars += str(item.encrypted_content).length;
        for (const s of Array.isArray(item.summary) ? item.summary : []) if (isObject(s)) d.reasoningChars += str(s.text).length;
        return;
      case "function_call":
        // `callId`: the Agents SDK's spelling of the same item (docs/integrations.md, "OpenAI Agents SDK: `createMemorySession`").
        d.toolCalls.push({ id: ref(str(item.call_id) || str(item.callId)), name: ref(str(item.name)), arguments: str(item.arguments) });
        return;
      case "custom_tool_call":
        d.toolCalls.push({ id: ref(str(item.call_id)), name: ref(str(item.name)), arguments: str(item.input) });
        return;
      case "function_call_output":
      case "custom_tool_call_output":
        result(d, str(item.call_id), resultText(item.output, d));
        return;
      case "function_call_result": {
        // The Agents SDK's function_call_output: its output may also be one `{ type, text }` part.
        const output = item.output;
        result(d, str(item.callId), isObject(output) ? resultText([output], d) : resultText(output, d));
        return;
      }
      default: {
        // Hosted tool calls, compaction items and the rest: output items of the model, except
        // the ones a client sends back (`*_output`, approval responses, the Agents SDK's `*_result`).
        const name = str(type);
        if (name.endsWith("_output") || name.endsWith("_response") || name.endsWith("_result")) d.saw.user = true;
        else d.saw.assistant = true;
        d.saw.other++;
        label(d, name || "item");
      }
    }
  },

  gemini(part, d) {
    if (typeof part.thoughtSignature === "string") d.reasoningChars += part.thoughtSignature.length;
    if (typeof part.text === "string") {
      if (part.thought === true) {
        d.saw.assistant = true;
        d.reasoningChars += part.text.length;
      } else d.texts.push(part.text);
      return;
    }
    const call = part.functionCall;
    if (isObject(call)) {
      const name = str(call.name);
      d.toolCalls.push({ id: ref(str(call.id) || name), name: ref(name), arguments: json(call.args) });
      return;
    }
    const response = part.functionResponse;
    if (isObject(response)) {
      result(d, str(response.id) || str(response.name), json(response.response));
      return;
    }
    if (isObject(part.inlineData) || isObject(part.fileData)) {
      const data = (part.inlineData ?? part.fileData) as JsonObject;
      media(d, str(data.mimeType) || "file");
      return;
    }
    if (part.thoughtSignature === undefined) {
      d.saw.other++;
      label(d, Object.keys(part)[0] ?? "part");
    }
  },

  "ai-sdk"(p, d) {
    switch (p.type) {
      case "text":
        d.texts.push(str(p.text));
        return;
      case "reasoning":
        d.saw.assistant = true;
        d.reasoningChars += str(p.text).length;
        return;
      case "file":
      case "image":
        media(d, `file: ${str(p.mediaType)}`);
        return;
      case "tool-call":
        if (p.providerExecuted === true) {
          d.saw.assistant = true;
          d.saw.other++;
          label(d, `${str(p.toolName)} call`);
        } else d.toolCalls.push({ id: ref(str(p.toolCallId)), name: ref(str(p.toolName)), arguments: json(p.input) });
        return;
      case "tool-result": {
        const output = isObject(p.output) ? p.output : {};
        const value = output.value;
        const text = output.type === "content" ? resultText(value, d) : typeof value === "string" ? value : JSON.stringify(value ?? output.reason ?? "");
        if (p.providerExecuted === true) {
          d.saw.assistant = true;
          d.saw.other++;
          d.texts.push(text);
        } else result(d, str(p.toolCallId), text);
        return;
      }
      default:
        d.saw.other++;
        label(d, str(p.type));
    }
  },
};
