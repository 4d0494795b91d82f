/**
 * A Vercel AI SDK (`ai` 6.x) language-model middleware: each model call becomes one turn of the
 * service, and the prompt the model receives is the service's replay instead of the caller's
 * history. Types only from `ai`; nothing is imported at run time.
 */
import type { LanguageModelMiddleware } from "ai";
import { idempotencyKey } from "./idempotency-key.js";
import type { MemoryClient } from "./memory-client.js";
import { splitBlock, toOpenAIMessages } from "./prompt-helpers.js";
import type { AppendMessageInput, ModelRef, ToolCall, Turn } from "./types.js";

// The provider-spec shapes, taken from the middleware type so that `ai` is the only peer.
type CallOptions = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"];
type Prompt = CallOptions["prompt"];
type PromptMessage = Prompt[number];
type ToolResultPart = Extract<Extract<PromptMessage, { role: "tool" }>["content"][number], { type: "tool-result" }>;
type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware["wrapGenerate"]>>>;
type StreamPart = Awaited<ReturnType<NonNullable<LanguageModelMiddleware["wrapStream"]>>>["stream"] extends ReadableStream<infer P> ? P : never;

export interface MemoryMiddlewareOptions {
  client: MemoryClient;
  processId: string;
  /** The model's context window in tokens; needed unless the service knows the model id (gpt-4o, claude-…). */
  contextWindow?: number;
  /** The model name the service sees; defaults to the wrapped model's id. */
  modelName?: string;
  /**
   * Mark the static part of the memory block as Anthropic's prompt-cache breakpoint
   * (`providerOptions.anthropic.cacheControl`); other providers ignore it. Default true.
   */
  cacheControl?: boolean;
  /**
   * Recall archived messages that match the newest user message (sent as the turn's `query`), and
   * place them: `"system"` in a system message after the cached part, `"message"` in a user
   * message right before the newest user message, so that recalled text does not speak with the
   * system role's authority. Default: no recall.
   */
  recall?: "system" | "message";
}

/**
 * Per model call: sends the prompt's newest message to the service as the turn (the user's
 * message, or in a tool loop the tool results since the model's last answer), replaces the prompt's
 * history with the replay (system prompt and the memory block's static part, the cache breakpoint,
 * the dynamic part, then the active messages), and appends the model's answer and tool calls once
 * it has them. The service holds the conversation: pass only the new message each time.
 *
 * @example
 * const model = wrapLanguageModel({
 *   model: openai("gpt-4o"),
 *   middleware: memoryMiddleware({ client: memory, processId: "frankie-42" }),
 * });
 * const { text } = await generateText({ model, system: "You are Frankie.", prompt: "Where were we?" });
 */
export function memoryMiddleware(options: MemoryMiddlewareOptions): LanguageModelMiddleware {
  const { client, processId } = options;

  const appendAnswer = async (text: string, toolCalls: ToolCall[]) => {
    if (text.trim() === "" && toolCalls.length === 0) return;
    await client.appendMessage(processId, { role: "ASSISTANT", content: text, ...(toolCalls.length ? { toolCalls } : {}) });
  };

  return {
    specificationVersion: "v3",

    async transformParams({ params, model }) {
      const { system, newMessages, newUserMessage } = readPrompt(params.prompt);
      // Tool results go one request each; the last one (or the user's message) rides on the turn.
      for (const m of newMessages.slice(0, -1)) await client.appendMessage(processId, m);
      const modelRef: ModelRef = { name: options.modelName ?? model.modelId, ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}) };
      const message = newMessages.at(-1);
      const query = options.recall ? newestUserText(params.prompt) : undefined;
      const turn = await client.beginTurn(processId, { ...(message ? { message } : {}), model: modelRef, ...(query ? { query } : {}) });
      const prompt = toPrompt(turn, system, options.cacheControl ?? true, options.recall === "message");
      // The user's message as the caller wrote it (files, provider options), not its stored text.
      if (newUserMessage && prompt.at(-1)?.role === "user") prompt[prompt.length - 1] = newUserMessage;
      // A trailing assistant message is a prefill: sent as is, stored with the answer that continues it.
      const last = params.prompt.at(-1);
      if (last?.role === "assistant") prompt.push(last);
      return { ...params, prompt };
    },

    async wrapGenerate({ doGenerate, params }) {
      const result: GenerateResult = await doGenerate();
      const text = prefillOf(params.prompt) + result.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      const calls = result.content.flatMap((p) =>
        p.type === "tool-call" && !p.providerExecuted ? [{ id: p.toolCallId, name: p.toolName, arguments: p.input }] : [],
      );
      await appendAnswer(text, calls);
      return result;
    },

    async wrapStream({ doStream, params }) {
      const { stream, ...rest } = await doStream();
      let text = prefillOf(params.prompt);
      const calls: ToolCall[] = [];
      const recorder = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === "text-delta") text += part.delta;
          else if (part.type === "tool-call" && !part.providerExecuted) calls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
          controller.enqueue(part);
        },
        // The answer is stored when the stream has been read to the end.
        flush: () => appendAnswer(text, calls),
      });
      return { stream: stream.pipeThrough(recorder), ...rest };
    },
  };
}

/**
 * The caller's system prompt (its leading system messages) and what is new in the prompt: the
 * last user message, or the tool results after the last assistant message in a tool loop.
 */
function readPrompt(prompt: Prompt): { system: string; newMessages: AppendMessageInput[]; newUserMessage?: PromptMessage } {
  const system: string[] = [];
  for (const m of prompt) {
    if (m.role !== "system") break;
    system.push(m.content);
  }
  const last = prompt.at(-1);
  if (last?.role === "user") {
    const content = last.content.map((p) => (p.type === "text" ? p.text : `[file${p.filename ? ` ${p.filename}` : ""}: ${p.mediaType}]`)).join("\n");
    return { system: system.join("\n\n"), newMessages: [{ role: "USER", content }], newUserMessage: last };
  }
  const results: AppendMessageInput[] = [];
  for (let i = prompt.length - 1; i >= 0 && prompt[i]!.role === "tool"; i--) {
    const m = prompt[i] as Extract<PromptMessage, { role: "tool" }>;
    const parts = m.content.filter((p): p is ToolResultPart => p.type === "tool-result");
    results.unshift(
      ...parts.map((p) => ({
        role: "TOOL" as const,
        content: toolOutputText(p.output),
        toolCallId: p.toolCallId,
        // A retried step sends the same results again: stored once.
        idempotencyKey: idempotencyKey(`tool:${p.toolCallId}`),
      })),
    );
  }
  return { system: system.join("\n\n"), newMessages: results };
}

/** The text of the prompt's newest user message (in a tool loop, the one the loop answers). */
function newestUserText(prompt: Prompt): string | undefined {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i]!;
    if (m.role === "user") return m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n").trim() || undefined;
  }
  return undefined;
}

/** The text of a trailing assistant message (a prefill), which the model's answer continues. */
function prefillOf(prompt: Prompt): string {
  const last = prompt.at(-1);
  return last?.role === "assistant" ? last.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("") : "";
}

/** The replay as a provider-spec prompt; with `recallAsMessage` the recall section is a user message. */
function toPrompt(turn: Turn, system: string, cacheControl: boolean, recallAsMessage: boolean): Prompt {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const prompt: Prompt = [];
  const head = [system, staticBlock].filter((s) => s.trim() !== "").join("\n\n");
  if (head) {
    prompt.push({
      role: "system",
      content: head,
      ...(cacheControl ? { providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } } : {}),
    });
  }
  if (dynamicBlock && !recallAsMessage) prompt.push({ role: "system", content: dynamicBlock });

  // The OpenAI shapes already pair tool results with their calls and turn orphans into text; given
  // a block that is all dynamic part, they also place it as a user message before the newest one.
  const recallOnly = { block: recallAsMessage ? dynamicBlock : "", staticBlock: "", sections: [] };
  const toolNames = new Map<string, string>();
  for (const m of toOpenAIMessages({ context: recallOnly, messages: turn.messages }, { recall: "message" })) {
    switch (m.role) {
      case "system":
        prompt.push({ role: "system", content: m.content });
        break;
      case "user":
        prompt.push({ role: "user", content: [{ type: "text", text: m.content }] });
        break;
      case "assistant":
        for (const c of m.tool_calls ?? []) toolNames.set(c.id, c.function.name);
        prompt.push({
          role: "assistant",
          content: [
            ...(m.content ? [{ type: "text" as const, text: m.content }] : []),
            ...(m.tool_calls ?? []).map((c) => ({ type: "tool-call" as const, toolCallId: c.id, toolName: c.function.name, input: parseArguments(c.function.arguments) })),
          ],
        });
        break;
      case "tool": {
        const part: ToolResultPart = {
          type: "tool-result",
          toolCallId: m.tool_call_id,
          toolName: toolNames.get(m.tool_call_id) ?? "",
          output: { type: "text", value: m.content },
        };
        // Results of one assistant message go in one tool message, as the SDK itself builds them.
        const prev = prompt.at(-1);
        if (prev?.role === "tool") prev.content.push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
    }
  }
  return prompt;
}

function toolOutputText(output: ToolResultPart["output"]): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return `[tool execution denied${output.reason ? `: ${output.reason}` : ""}]`;
    case "content":
      return output.value.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");
  }
}

function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}
