/**
 * The OpenAI Responses API `input` from a turn: stored `openai-responses` items exactly, the rest
 * converted from their text. Plain types only.
 */
import { nativeOf, newestUserMessage, orphanToolResult, pairToolResults, splitBlock, uniqueCalls, type PromptOptions, type TurnLike } from "./prompt-replay.js";

/** An item of a Responses API `input`: a message, or a stored item (reasoning, function_call, …) as it is. */
export type OpenAIResponsesItem =
  | { role: "developer" | "user" | "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string }
  | { type: string; [field: string]: unknown };

/**
 * The Responses API `input`: the engine's prompt (when given), the memory block's static part and
 * its dynamic part as `developer` messages, then the active messages. A message stored with
 * `openai-responses` content is its items exactly (reasoning with `encrypted_content`, function
 * calls, hosted tool calls, compaction items); any other is converted: USER and ASSISTANT text as
 * messages, tool calls as `function_call` items, each answered by a `function_call_output` right
 * after (its result, or a placeholder when it has none). The recall option works as for
 * {@link toOpenAIMessages}. With a turn asked with `format: "openai-responses"`, this is
 * `turn.request.input` with the engine's prompt in front.
 *
 * Items the Agents SDK session stored are in the SDK's own shapes (`callId`): that session reads them.
 *
 * @example
 * const response = await openai.responses.create({ model: "gpt-5", instructions, input: toOpenAIResponsesInput(turn), store: false, include: ["reasoning.encrypted_content"] });
 * await memory.appendMessage(processId, { native: { format: "openai-responses", content: response.output } });
 */
export function toOpenAIResponsesInput(turn: TurnLike, options: PromptOptions = {}): OpenAIResponsesItem[] {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const recallAsMessage = options.recall === "message" && dynamicBlock !== "";
  const input: OpenAIResponsesItem[] = [];
  for (const text of [options.system, staticBlock, recallAsMessage ? "" : dynamicBlock]) {
    if (text && text.trim() !== "") input.push({ role: "developer", content: text });
  }
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  if (recallAsMessage && !beforeUser) input.push({ role: "user", content: dynamicBlock });
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
    if (m === beforeUser) input.push({ role: "user", content: dynamicBlock });
    const native = nativeOf(m, "openai-responses") as OpenAIResponsesItem[] | undefined;
    if (native) input.push(...native);
    else {
      switch (m.role) {
        case "SYSTEM":
          input.push({ role: "developer", content: m.content });
          break;
        case "USER":
          input.push({ role: "user", content: m.content });
          break;
        case "ASSISTANT":
          if (m.content !== "") input.push({ role: "assistant", content: m.content });
          for (const c of uniqueCalls(m)) input.push({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments });
          break;
        case "TOOL":
          input.push({ role: "user", content: orphanToolResult(m) });
          break;
      }
    }
    for (const a of answers ?? []) {
      const whole = a.message && nativeOf(a.message, "openai-responses");
      if (whole) {
        if (a.first && !a.inPlace) input.push(...(whole as OpenAIResponsesItem[]));
      } else input.push({ type: "function_call_output", call_id: a.toolCallId, output: a.content });
    }
  }
  return input;
}

