/**
 * A Vercel AI SDK (`ai` 6.x) language-model middleware: each model call becomes one turn of the
 * service, and the prompt the model receives is the service's replay instead of the caller's
 * history. Every message is kept in the SDK's own shape (native format `ai-sdk`). Types only from
 * `ai`; nothing is imported at run time.
 */
import type { LanguageModelMiddleware } from "ai";
import { idempotencyKey } from "./idempotency-key.js";
import type { MemoryClient } from "./memory-client.js";
import { splitBlock } from "./prompt-helpers.js";
import type { AppendMessageInput, ModelRef } from "./input-types.js";
import type { Turn } from "./types.js";

// The provider-spec shapes, taken from the middleware type so that `ai` is the only peer.
type CallOptions = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"];
type Prompt = CallOptions["prompt"];
type PromptMessage = Prompt[number];
type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware["wrapGenerate"]>>>;
/** One part of what the model returned (LanguageModelV3Content). */
export type ModelOutput = GenerateResult["content"][number];
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
   * place them: `"system"` as the service sends them (a system message in the transcript where
   * they were recalled, or after the cached part when its settings put recall in the system
   * prompt), `"message"` in a user message instead, so that recalled text does not speak with the
   * system role's authority. Default: no recall.
   */
  recall?: "system" | "message";
}

/**
 * Per model call: sends the prompt's newest message to the service as the turn (the user's
 * message, or in a tool loop the tool results since the model's last answer), replaces the prompt's
 * history with the replay (system prompt and the memory block's static part, the cache breakpoint,
 * the dynamic part, then the active messages), and appends the model's answer once it has it.
 * Every message is stored natively (format `ai-sdk`: the message's `content` parts exactly,
 * reasoning with its `providerOptions` included) and replayed from the turn's `request.prompt`, so
 * the model gets back exactly what it returned. The service holds the conversation: pass only
 * the new message each time.
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

  /** Stores the answer, after the prefill it continues (one assistant message, as the caller sees it). */
  const appendAnswer = async (prompt: Prompt, content: AnswerContent[]) => {
    const last = prompt.at(-1);
    const prefill = last?.role === "assistant" ? last.content : [];
    if (prefill.length + content.length === 0) return;
    const text = (parts: readonly object[]) => parts.flatMap((p) => ("type" in p && p.type === "text" && "text" in p && typeof p.text === "string" ? [p.text] : [])).join("");
    await client.appendMessage(processId, {
      role: "ASSISTANT",
      native: { format: "ai-sdk", content: [...prefill.map(toJsonPart), ...content] },
      // The prefill and its continuation read as one text, as the caller sees it.
      ...(prefill.length > 0 ? { content: text(prefill) + text(content) } : {}),
    });
  };

  return {
    specificationVersion: "v3",

    async transformParams({ params, model }) {
      const { system, newMessages, newUserMessage } = readPrompt(params.prompt);
      // Tool messages go one request each; the last one (or the user's message) rides on the turn.
      for (const m of newMessages.slice(0, -1)) await client.appendMessage(processId, m);
      const modelRef: ModelRef = { name: options.modelName ?? model.modelId, ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}) };
      const message = newMessages.at(-1);
      const query = options.recall ? newestUserText(params.prompt) : undefined;
      const turn = await client.beginTurn(processId, { ...(message ? { message } : {}), model: modelRef, format: "ai-sdk", ...(query ? { query } : {}) });
      const prompt = toPrompt(turn, system, options.cacheControl ?? true, options.recall === "message");
      // The user's message as the caller wrote it (message-level provider options, file URLs kept).
      // Recall the service appended after it does not count.
      let newest = prompt.length - 1;
      while (newest >= 0 && isRecall(prompt[newest]!)) newest--;
      if (newUserMessage && prompt[newest]?.role === "user") prompt[newest] = newUserMessage;
      // A trailing assistant message is a prefill: sent as is, stored with the answer that continues it.
      const last = params.prompt.at(-1);
      if (last?.role === "assistant") prompt.push(last);
      return { ...params, prompt };
    },

    async wrapGenerate({ doGenerate, params }) {
      const result: GenerateResult = await doGenerate();
      await appendAnswer(params.prompt, answerContent(result.content));
      return result;
    },

    async wrapStream({ doStream, params }) {
      const { stream, ...rest } = await doStream();
      const recorded = recordStream();
      const recorder = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          recorded.add(part);
          controller.enqueue(part);
        },
        // The answer is stored when the stream has been read to the end.
        flush: () => appendAnswer(params.prompt, answerContent(recorded.content)),
      });
      return { stream: stream.pipeThrough(recorder), ...rest };
    },
  };
}

// ------------------------------------------------------------------------------ the answer

/** An assistant ModelMessage content part, as JSON. */
type AnswerContent = Record<string, unknown>;

/**
 * The model's output as the content of the assistant ModelMessage, built the way the SDK builds a
 * step's response message (`toResponseMessages` in `ai`): sources and empty text left out,
 * text and reasoning in their order with `providerMetadata` as `providerOptions`, tool calls with
 * their parsed input, provider-executed results in the same message.
 */
export function answerContent(content: readonly ModelOutput[]): AnswerContent[] {
  const out: AnswerContent[] = [];
  const options = (metadata: unknown) => (metadata != null ? { providerOptions: metadata } : {});
  for (const part of content) {
    switch (part.type) {
      case "text":
        if (part.text.length > 0) out.push({ type: "text", text: part.text, ...options(part.providerMetadata) });
        break;
      case "reasoning":
        out.push({ type: "reasoning", text: part.text, ...options(part.providerMetadata) });
        break;
      case "file":
        out.push({ type: "file", data: typeof part.data === "string" ? part.data : base64(part.data), mediaType: part.mediaType, ...options(part.providerMetadata) });
        break;
      case "tool-call":
        out.push({
          type: "tool-call",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parseInput(part.input),
          ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
          ...options(part.providerMetadata),
        });
        break;
      case "tool-result":
        if (part.preliminary) break;
        out.push({
          type: "tool-result",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: part.isError ? { type: "error-json", value: part.result } : typeof part.result === "string" ? { type: "text", value: part.result } : { type: "json", value: part.result },
          ...options(part.providerMetadata),
        });
        break;
      case "tool-approval-request":
        out.push({ type: "tool-approval-request", approvalId: part.approvalId, toolCallId: part.toolCallId });
        break;
      case "source":
        break;
      default:
        // A part type newer than this client: kept as the model returned it.
        out.push(toJsonPart(part as never));
    }
  }
  return out;
}

/** The content a stream carried, collected the way `streamText` records a step. */
function recordStream(): { content: ModelOutput[]; add(part: StreamPart): void } {
  const content: ModelOutput[] = [];
  const open = new Map<string, { type: "text" | "reasoning"; text: string; providerMetadata?: unknown }>();
  return {
    content,
    add(part) {
      switch (part.type) {
        case "text-start":
        case "reasoning-start": {
          const active = { type: part.type === "text-start" ? ("text" as const) : ("reasoning" as const), text: "", providerMetadata: part.providerMetadata };
          open.set(`${active.type}:${part.id}`, active);
          content.push(active as ModelOutput);
          break;
        }
        case "text-delta":
        case "reasoning-delta":
        case "text-end":
        case "reasoning-end": {
          const active = open.get(`${part.type.startsWith("text") ? "text" : "reasoning"}:${part.id}`);
          if (!active) break;
          if (part.type === "text-delta" || part.type === "reasoning-delta") active.text += part.delta;
          active.providerMetadata = part.providerMetadata ?? active.providerMetadata;
          if (part.type === "text-end" || part.type === "reasoning-end") open.delete(`${active.type}:${part.id}`);
          break;
        }
        case "file":
        case "tool-call":
        case "tool-result":
        case "tool-approval-request":
          content.push(part);
          break;
      }
    },
  };
}

/** Tool-call input as the SDK passes it on: parsed JSON, `{}` when empty or unparsable. */
function parseInput(input: string): unknown {
  if (input.trim() === "") return {};
  try {
    return JSON.parse(input);
  } catch {
    return {};
  }
}

// ------------------------------------------------------------------------------ the prompt

/**
 * A prompt part as JSON, for native content: bytes as base64 and URLs as their text (a file's
 * `data`); everything else as it is.
 */
function toJsonPart(part: object): Record<string, unknown> {
  if (!("data" in part)) return { ...part };
  const { data } = part as { data: unknown };
  return { ...part, data: data instanceof Uint8Array ? base64(data) : data instanceof URL ? data.href : data };
}

/** A stored message back as a prompt message: a file whose `data` is an http(s) address is a URL again (base64 never has a colon). */
function fromJsonMessage(message: Record<string, unknown>): PromptMessage {
  if (!Array.isArray(message.content)) return message as unknown as PromptMessage;
  const content = (message.content as Record<string, unknown>[]).map((p) =>
    p.type === "file" && typeof p.data === "string" && /^https?:\/\//.test(p.data) ? { ...p, data: new URL(p.data) } : p,
  );
  return { ...message, content } as unknown as PromptMessage;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * The caller's system prompt (its leading system messages) and what is new in the prompt: the
 * last user message, or the tool messages after the last assistant message in a tool loop, each
 * as native content.
 */
function readPrompt(prompt: Prompt): { system: string; newMessages: AppendMessageInput[]; newUserMessage?: PromptMessage } {
  const system: string[] = [];
  for (const m of prompt) {
    if (m.role !== "system") break;
    system.push(m.content);
  }
  const last = prompt.at(-1);
  if (last?.role === "user") {
    return { system: system.join("\n\n"), newMessages: [{ role: "USER", native: { format: "ai-sdk", content: last.content.map(toJsonPart) } }], newUserMessage: last };
  }
  const results: AppendMessageInput[] = [];
  for (let i = prompt.length - 1; i >= 0 && prompt[i]!.role === "tool"; i--) {
    const m = prompt[i] as Extract<PromptMessage, { role: "tool" }>;
    const ids = m.content.flatMap((p) => (p.type === "tool-result" ? [p.toolCallId] : []));
    results.unshift({
      // The role follows from the parts (all results: TOOL); approval answers alone are the user's.
      ...(ids.length === 0 ? { role: "USER" as const } : {}),
      native: { format: "ai-sdk", content: m.content.map(toJsonPart) },
      // A retried step sends the same results again: stored once.
      ...(ids.length > 0 ? { idempotencyKey: idempotencyKey(`tool:${ids.join(",")}`) } : {}),
    });
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

/**
 * The prompt from the turn's `request` (format `ai-sdk`): the service puts the memory block first
 * (the static part, then the dynamic part, as system messages) and the active messages after it,
 * native ones exactly as stored. The caller's system prompt goes before the block, in the message
 * that carries the cache breakpoint; with `recallAsMessage` the dynamic part is a user message
 * before the newest user message instead.
 */
const RECALL_START = "## Recalled From History\n";

/** A recall message of the transcript, as the service sent it or as {@link recallAsUser} turned it. */
function isRecall(m: PromptMessage): boolean {
  if (m.role === "system") return m.content.startsWith(RECALL_START);
  if (m.role !== "user") return false;
  const first = m.content[0];
  return first?.type === "text" && first.text.startsWith(RECALL_START);
}

function recallAsUser(m: PromptMessage): PromptMessage {
  return m.role === "system" && m.content.startsWith(RECALL_START) ? { role: "user", content: [{ type: "text", text: m.content }] } : m;
}

function toPrompt(turn: Turn, system: string, cacheControl: boolean, recallAsMessage: boolean): Prompt {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const request = turn.request && "prompt" in turn.request ? turn.request.prompt : [];
  const blockMessages = (staticBlock.trim() !== "" ? 1 : 0) + (dynamicBlock !== "" ? 1 : 0);
  const messages = request.slice(blockMessages).map(fromJsonMessage);

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
  if (dynamicBlock && recallAsMessage) {
    const recall: PromptMessage = { role: "user", content: [{ type: "text", text: dynamicBlock }] };
    let newestUser = messages.length - 1;
    while (newestUser >= 0 && messages[newestUser]!.role !== "user") newestUser--;
    messages.splice(Math.max(0, newestUser), 0, recall);
  }
  // Recall the service placed in the transcript (a system message where it was recalled) goes as
  // a user message too: the same place each turn, so the prompt still only grows.
  prompt.push(...(recallAsMessage ? messages.map(recallAsUser) : messages));
  return prompt;
}
