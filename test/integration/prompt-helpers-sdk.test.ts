/**
 * The prompt helpers' requests through the real `openai` and `@anthropic-ai/sdk` SDKs to the local
 * wire server, which answers 400 the way the providers do when a tool rule is broken. The
 * request objects are typed with the SDKs' own parameter types, so `tsc` checks the shapes too.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages";
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toAnthropicRequest, toOpenAIMessages } from "../../client/prompt-helpers.js";
import type { Message } from "../../core/domain/model.js";
import { replayMessages } from "../../core/domain/replay.js";
import {
  anthropicErrorBody,
  anthropicMessageBody,
  chatCompletionBody,
  openAIErrorBody,
  startLlmWireServer,
  type LlmWireServer,
  type RecordedRequest,
} from "../../tools/llm-wire-server.js";
import { anthropicRequestProblems, openAIRequestProblems } from "../support/provider-rules.js";

let server: LlmWireServer;
beforeAll(async () => {
  server = await startLlmWireServer();
  // Like the providers: a request that breaks a tool rule is a 400 naming the problem.
  server.setFallback((req: RecordedRequest) => {
    if (req.path === "/v1/chat/completions") {
      const problems = openAIRequestProblems(req.body?.messages);
      return problems.length ? { status: 400, body: openAIErrorBody(problems.join("; "), "invalid_request_error") } : { body: chatCompletionBody("ok") };
    }
    const problems = anthropicRequestProblems(req.body?.messages);
    return problems.length ? { status: 400, body: anthropicErrorBody(problems.join("; "), "invalid_request_error") } : { body: anthropicMessageBody("ok") };
  });
});
afterAll(async () => server.close());

let seq = 0;
const msg = (role: Message["role"], content: string, extra: Partial<Message> = {}): Message => ({
  id: `01J${String(++seq).padStart(23, "0")}`,
  processId: "p1",
  role,
  content,
  tags: [],
  createdAt: "2025-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 10,
  ...extra,
});

/**
 * What an agent loop's replay looks like after clearing and folding: a result whose call was
 * folded, a cleared result, parallel calls answered out of order across a user message, and a
 * call whose result never came.
 */
function agentReplay(): Message[] {
  const call = (id: string, name = "read_file") => ({ id, name, arguments: `{"path":"${id}.ts"}` });
  const stored: Message[] = [
    msg("TOOL", "late result of a folded call", { toolCallId: "folded_1" }),
    msg("USER", "Keep going through the modules."),
    msg("ASSISTANT", "", { toolCalls: [call("a")] }),
    msg("TOOL", "x".repeat(4000), { toolCallId: "a", cleared: { at: "2025-01-01T00:00:00.000Z", toolName: "read_file", chars: 4000, tokens: 1004 } }),
    msg("ASSISTANT", "Reading two more.", { toolCalls: [call("b"), call("c", "grep")] }),
    msg("TOOL", "contents of c", { toolCallId: "c" }),
    msg("USER", "Also check the tests."),
    msg("TOOL", "contents of b", { toolCallId: "b" }),
    msg("ASSISTANT", "", { toolCalls: [call("lost", "run_tests")] }),
    msg("ASSISTANT", "The tests did not report back; continuing."),
  ];
  return replayMessages(stored);
}
const context = { block: "## Earlier Conversation (compacted)\nThe agent read 120 modules.", staticBlock: "## Earlier Conversation (compacted)\nThe agent read 120 modules.", sections: [] };

describe("prompt helpers through the real SDKs", () => {
  it("OpenAI accepts the messages: one tool message per call id right after its call", async () => {
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const params: ChatCompletionCreateParamsNonStreaming = {
      model: "gpt-4o",
      messages: toOpenAIMessages({ context, messages: agentReplay() }, { system: "You are a coding agent." }),
    };
    const completion = await openai.chat.completions.create(params);
    expect(completion.choices[0]!.message.content).toBe("ok");
    const sent = server.requests.at(-1)!.body.messages as any[];
    const ids = sent.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(ids).toEqual(["a", "b", "c", "lost"]);
    expect(sent.find((m) => m.tool_call_id === "lost").content).toContain("no result was recorded");
    expect(sent.find((m) => m.tool_call_id === "a").content).toContain("tool result cleared");
  });

  it("Anthropic accepts the request: every tool_use answered in the very next user message", async () => {
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.url, maxRetries: 0 });
    const params: MessageCreateParamsNonStreaming = {
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      ...toAnthropicRequest({ context, messages: agentReplay() }, { system: "You are a coding agent.", cacheConversation: true }),
    };
    const reply = await anthropic.messages.create(params);
    expect(reply.content[0]).toMatchObject({ type: "text", text: "ok" });
    const sent = server.requests.at(-1)!.body.messages as any[];
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
  });

  it("the wire server refuses what the providers refuse, so the tests above can fail", async () => {
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const broken: ChatCompletionCreateParamsNonStreaming = {
      model: "gpt-4o",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "user", content: "and?" },
      ],
    };
    await expect(openai.chat.completions.create(broken)).rejects.toMatchObject({ status: 400 });
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.url, maxRetries: 0 });
    await expect(
      anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "x" }] }] }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
