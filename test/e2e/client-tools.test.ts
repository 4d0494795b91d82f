/**
 * The model tools (`search_history`, `get_message`): definitions sent through the real OpenAI and
 * Anthropic SDKs (to a local server speaking their wire formats), calls run by the handler against
 * the local runner, and the errors a model gets back.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient, MemoryApiError, type MemoryClient } from "../../client/index.js";
import { createMemoryToolHandler, getMessageTool, historySearchTool, memoryTools } from "../../client/tools.js";
import { anthropicMessageBody, chatCompletionBody, startLlmWireServer } from "../../tools/llm-wire-server.js";
import { serviceBeside } from "../support/service-beside.js";

const stack = serviceBeside(() => startLlmWireServer());
let memory: MemoryClient;
let archivedId: string;
const PROCESS = "tools-1";
const SECRET_DETAIL = "The staging database password rotates every 30 days; the runbook is docs/rotate.md, owner Priya.";

beforeAll(async () => {
  memory = stack.memory;
  await memory.upsertProcess(PROCESS, { projectId: "tools" });
  await memory.appendMessage(PROCESS, { role: "USER", content: "Set up the staging environment." });
  const from = new Date().toISOString();
  const { message } = await memory.appendMessage(PROCESS, { role: "ASSISTANT", content: SECRET_DETAIL });
  archivedId = message.id;
  await memory.appendMessage(PROCESS, { role: "USER", content: "And the load balancer health checks?" });
  const to = new Date().toISOString();
  // The user moves on first: a range never folds the newest USER message (the triggering turn).
  await memory.appendMessage(PROCESS, { role: "USER", content: "Now the production rollout." });
  expect((await memory.compactRange(PROCESS, { from, to, topicLabel: "staging setup" })).compactedMessages).toBe(2);
});

const openAIToolCall = (id: string, name: string, args: unknown) => ({
  body: {
    ...chatCompletionBody(null, { finishReason: "tool_calls" }),
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: null, refusal: null, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] },
        finish_reason: "tool_calls",
        logprobs: null,
      },
    ],
  },
});

describe("model tools through the real SDKs", () => {
  it("OpenAI: the model searches the archive, reads the message in full, and answers", async () => {
    stack.provider.reset();
    stack.provider.reply(
      openAIToolCall("call_1", "search_history", { query: "staging password rotation" }),
      (req) => {
        const hits = JSON.parse(req.body.messages.at(-1).content).results;
        return openAIToolCall("call_2", "get_message", { messageId: hits[0].messageId });
      },
      { body: chatCompletionBody("Every 30 days, see docs/rotate.md.") },
    );
    const openai = new OpenAI({ baseURL: `${stack.provider.url}/v1`, apiKey: "test", maxRetries: 0 });
    const runTool = createMemoryToolHandler({ client: memory, processId: PROCESS });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "How often does the staging password rotate?" }];
    for (let step = 0; step < 5; step++) {
      const completion = await openai.chat.completions.create({ model: "gpt-4o-mini", messages, tools: memoryTools.map((t) => t.openai) });
      const reply = completion.choices[0]!.message;
      messages.push(reply);
      if (!reply.tool_calls?.length) break;
      for (const call of reply.tool_calls) {
        if (call.type !== "function") continue;
        const { content } = await runTool(call.function.name, call.function.arguments);
        messages.push({ role: "tool", tool_call_id: call.id, content });
      }
    }

    expect(stack.provider.requests[0]!.body.tools).toEqual([
      { type: "function", function: { name: "search_history", description: historySearchTool.description, parameters: historySearchTool.parameters } },
      { type: "function", function: { name: "get_message", description: getMessageTool.description, parameters: getMessageTool.parameters } },
    ]);
    const search = JSON.parse(stack.provider.requests[1]!.body.messages.at(-1).content);
    expect(search.results[0]).toMatchObject({ messageId: archivedId, role: "ASSISTANT", archived: true, excerpt: SECRET_DETAIL });
    const full = JSON.parse(stack.provider.requests[2]!.body.messages.at(-1).content);
    expect(full).toMatchObject({ messageId: archivedId, archived: true, content: SECRET_DETAIL });
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "Every 30 days, see docs/rotate.md." });
  });

  it("Anthropic: the same tools as tool definitions, input as an object, results as tool_result blocks", async () => {
    stack.provider.reset();
    stack.provider.reply(
      { body: { ...anthropicMessageBody(""), content: [{ type: "tool_use", id: "toolu_1", name: "get_message", input: { messageId: archivedId } }], stop_reason: "tool_use" } },
      { body: anthropicMessageBody("Priya owns the runbook.") },
    );
    const anthropic = new Anthropic({ baseURL: stack.provider.url, apiKey: "test", maxRetries: 0 });
    const runTool = createMemoryToolHandler({ client: memory, processId: PROCESS });
    const tools = memoryTools.map((t) => t.anthropic);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Who owns the rotation runbook?" }];
    const first = await anthropic.messages.create({ model: "claude-3-5-haiku-latest", max_tokens: 512, messages, tools });
    messages.push({ role: "assistant", content: first.content });
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const block of first.content) {
      if (block.type !== "tool_use") continue;
      const { content, isError } = await runTool(block.name, block.input);
      results.push({ type: "tool_result", tool_use_id: block.id, content, is_error: isError });
    }
    messages.push({ role: "user", content: results });
    const second = await anthropic.messages.create({ model: "claude-3-5-haiku-latest", max_tokens: 512, messages, tools });

    expect(stack.provider.requests[0]!.body.tools).toEqual([
      { name: "search_history", description: historySearchTool.description, input_schema: historySearchTool.parameters },
      { name: "get_message", description: getMessageTool.description, input_schema: getMessageTool.parameters },
    ]);
    const sent = stack.provider.requests[1]!.body.messages.at(-1).content[0];
    expect(sent).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: false });
    expect(JSON.parse(sent.content)).toMatchObject({ messageId: archivedId, content: SECRET_DETAIL });
    expect(second.content[0]).toMatchObject({ type: "text", text: "Priya owns the runbook." });
  });
});

describe("tool errors a model can act on", () => {
  const runTool = () => createMemoryToolHandler({ client: memory, processId: PROCESS });
  const errorOf = async (name: string, input: unknown) => {
    const result = await runTool()(name, input);
    expect(result.isError).toBe(true);
    return JSON.parse(result.content).error as string;
  };

  it("names what is wrong with the arguments, without calling the service", async () => {
    expect(await errorOf("search_history", "{not json")).toBe("search_history: the arguments are not valid JSON");
    expect(await errorOf("search_history", "[]")).toBe("search_history: the arguments must be a JSON object");
    expect(await errorOf("search_history", { q: "x" })).toBe('search_history: unknown field "q"; "query" is required');
    expect(await errorOf("search_history", { query: "  " })).toBe('search_history: "query" must not be empty');
    expect(await errorOf("search_history", { query: "x", limit: 99 })).toBe('search_history: "limit" must be between 1 and 20');
    expect(await errorOf("search_history", { query: "x", limit: "3" })).toBe('search_history: "limit" must be an integer');
    expect(await errorOf("get_message", {})).toBe('get_message: "messageId" is required');
    expect(await errorOf("delete_history", {})).toBe('unknown tool "delete_history"; this handler runs search_history, get_message');
  });

  it("passes on the service's 404 and 400 as tool errors", async () => {
    expect(await errorOf("get_message", { messageId: "msg_missing" })).toMatch(/^message\.not_found: /);
    expect(await errorOf("search_history", { query: "x", tag: "t".repeat(200) })).toMatch(/^request\.invalid: /);
  });

  it("reads only the bound process, and throws when the service itself refuses", async () => {
    await memory.upsertProcess("tools-other", { projectId: "tools" });
    const other = createMemoryToolHandler({ client: memory, processId: "tools-other" });
    expect(JSON.parse((await other("search_history", { query: "staging password" })).content)).toEqual({ results: [] });
    const wrongKey = createMemoryToolHandler({ client: createMemoryClient({ baseUrl: stack.ctx.service.url, apiKey: "wrong" }), processId: PROCESS });
    await expect(wrongKey("search_history", { query: "x" })).rejects.toMatchObject({ status: 401, code: "auth.invalid_key" });
    await expect(wrongKey("search_history", { query: "x" })).rejects.toBeInstanceOf(MemoryApiError);
  });
});
