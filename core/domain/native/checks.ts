/**
 * The structural rules native content must meet before it is stored (docs/api.md, "Native
 * content"): each element is an object, and the block or item types the service reads for its
 * projection carry the fields it reads, of the right type. Unknown types pass as they are: a
 * provider's new block is kept, never refused. Each problem names its path inside `content`.
 */
import { isObject, type Json, type JsonObject, type NativeFormat } from "./formats.js";

export interface NativeProblem {
  path: Array<string | number>;
  message: string;
}

type Field = "string" | "object" | "array" | "string|array" | "string|object";

/** The fields a known type must carry, per format (types absent here are not checked). */
const REQUIRED: Record<NativeFormat, Record<string, Record<string, Field>>> = {
  anthropic: {
    text: { text: "string" },
    thinking: { thinking: "string", signature: "string" },
    redacted_thinking: { data: "string" },
    tool_use: { id: "string", name: "string", input: "object" },
    server_tool_use: { id: "string", name: "string" },
    tool_result: { tool_use_id: "string" },
    image: { source: "object" },
    document: { source: "object" },
  },
  "openai-responses": {
    message: { role: "string", content: "string|array" },
    reasoning: {},
    function_call: { name: "string", arguments: "string" },
    function_call_output: { call_id: "string", output: "string|array" },
    // The Agents SDK's own spelling of a result (docs/integrations.md, "OpenAI Agents SDK: `createMemorySession`").
    function_call_result: { callId: "string" },
    custom_tool_call: { call_id: "string", name: "string", input: "string" },
    custom_tool_call_output: { call_id: "string", output: "string|array" },
  },
  gemini: {},
  "ai-sdk": {
    text: { text: "string" },
    reasoning: { text: "string" },
    "tool-call": { toolCallId: "string", toolName: "string" },
    "tool-result": { toolCallId: "string", toolName: "string", output: "object" },
    file: { mediaType: "string", data: "string|object" },
  },
};

/** Gemini parts have no `type`: a call or a response part is checked on the fields the projection reads. */
const GEMINI_CALL: Record<string, Record<string, Field>> = {
  functionCall: { name: "string" },
  functionResponse: { name: "string", response: "object" },
};

function fits(value: Json | undefined, field: Field): boolean {
  switch (field) {
    case "string":
      return typeof value === "string";
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "string|array":
      return typeof value === "string" || Array.isArray(value);
    case "string|object":
      return typeof value === "string" || isObject(value);
  }
}

function checkFields(element: JsonObject, fields: Record<string, Field>, at: Array<string | number>, out: NativeProblem[]) {
  for (const [name, field] of Object.entries(fields)) {
    if (!fits(element[name], field)) out.push({ path: [...at, name], message: `must be ${field.replace("|", " or ")}` });
  }
}

/**
 * Every problem of `content` in `format`, at most `max` of them (a hostile body of many bad
 * elements gets a short answer). Linear in the number of elements.
 *
 * @example nativeProblems("anthropic", [{ type: "thinking", thinking: "…" }])
 * // [{ path: [0, "signature"], message: "must be string" }]
 */
export function nativeProblems(format: NativeFormat, content: readonly unknown[], max = 20): NativeProblem[] {
  const out: NativeProblem[] = [];
  for (let i = 0; i < content.length && out.length < max; i++) {
    const element = content[i] as Json;
    if (!isObject(element)) {
      out.push({ path: [i], message: "must be an object" });
      continue;
    }
    if (format === "gemini") {
      for (const [name, fields] of Object.entries(GEMINI_CALL)) {
        const call = element[name];
        if (isObject(call)) checkFields(call, fields, [i, name], out);
      }
      continue;
    }
    const type = element.type;
    if (type === undefined && format === "openai-responses" && "role" in element) {
      checkFields(element, REQUIRED[format].message!, [i], out); // an input message may omit `type`
      continue;
    }
    if (typeof type !== "string") {
      out.push({ path: [i, "type"], message: "must be string" });
      continue;
    }
    const fields = REQUIRED[format][type];
    if (fields) checkFields(element, fields, [i], out);
    // A call's id is `call_id` in the Responses API and `callId` in the Agents SDK's items.
    if (format === "openai-responses" && type === "function_call" && typeof element.call_id !== "string" && typeof element.callId !== "string") {
      out.push({ path: [i, "call_id"], message: "must be string" });
    }
  }
  return out.slice(0, max);
}
