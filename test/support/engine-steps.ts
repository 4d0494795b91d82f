/**
 * One step of an engine's tool loop through the service, on a provider SDK pointed at the provider
 * emulator: the turn (appending the step's message as native content and naming the format), the
 * model call on the turn's `request`, and the model's answer appended back as native content.
 * Each engine reads code or runs tests with one tool.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { MemoryClient, Turn } from "../../client/index.js";

type Model = { name: string; contextWindow: number };
type Message<Content> = { role: "USER" | "TOOL"; content: Content };

/** A Claude engine's step; `thinking` replaces the default thinking configuration. */
export async function anthropicStep(
  client: MemoryClient,
  anthropic: Anthropic,
  processId: string,
  message: Message<Anthropic.ContentBlockParam[]>,
  model: Model,
  thinking: Anthropic.ThinkingConfigParam = { type: "enabled", budget_tokens: 2048 },
): Promise<{ turn: Turn; call: Anthropic.ToolUseBlock | undefined }> {
  const turn = await client.beginTurn(processId, { message: { role: message.role, native: { format: "anthropic", content: message.content } }, model, format: "anthropic" });
  const request = turn.request as unknown as { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] };
  const reply = await anthropic.messages.create({
    model: model.name,
    max_tokens: 4096,
    thinking,
    system: [{ type: "text", text: "You read code." }, ...request.system],
    tools: [{ name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } }],
    messages: request.messages,
  });
  await client.appendMessage(processId, { native: { format: "anthropic", content: reply.content } });
  return { turn, call: reply.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use") };
}

/** An engine's step on the Responses API with encrypted reasoning. */
export async function responsesStep(
  client: MemoryClient,
  openai: OpenAI,
  processId: string,
  message: Message<OpenAI.Responses.ResponseInputItem[]>,
  model: Model,
): Promise<{ turn: Turn; call: OpenAI.Responses.ResponseFunctionToolCall | undefined }> {
  const turn = await client.beginTurn(processId, { message: { role: message.role, native: { format: "openai-responses", content: message.content } }, model, format: "openai-responses" });
  const { input } = turn.request as unknown as { input: OpenAI.Responses.ResponseInputItem[] };
  const response = await openai.responses.create({
    model: model.name,
    instructions: "You run tests.",
    reasoning: { effort: "medium" },
    include: ["reasoning.encrypted_content"],
    store: false,
    tools: [{ type: "function", name: "run_tests", parameters: { type: "object", properties: {} }, strict: false }],
    input,
  });
  await client.appendMessage(processId, { native: { format: "openai-responses", content: response.output } });
  return { turn, call: response.output.find((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === "function_call") };
}
