/**
 * The prompt helpers with native content: a message stored in the helper's format is sent exactly
 * as stored, any other is converted from its text (another provider's reasoning is never sent),
 * and cleared and missing results take each format's result shape.
 */
import { describe, expect, it } from "vitest";
import { toGeminiContents } from "../../client/gemini-contents.js";
import { toOpenAIResponsesInput } from "../../client/openai-responses-input.js";
import { missingResultText, toAnthropicRequest, toOpenAIMessages } from "../../client/prompt-helpers.js";
import type { Message, NativeContent, Turn } from "../../client/types.js";

let seq = 0;
const msg = (role: Message["role"], content: string, extra: Partial<Message> = {}): Message => ({
  id: `msg_${String(++seq).padStart(4, "0")}`,
  processId: "p",
  role,
  content,
  tags: [],
  createdAt: "2024-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 1,
  ...extra,
});
const turn = (messages: Message[]): Turn => ({
  compaction: { mode: "NONE", compacted: false, compactedMessages: 0, tokensBefore: 0, tokensAfter: 0 },
  prefix: { kept: true },
  window: { tokens: 128_000, source: "model", model: "gpt-4o" },
  summaryId: null,
  context: { block: "## Earlier Conversation (compacted)\nPostgres.", staticBlock: "## Earlier Conversation (compacted)\nPostgres.", sections: [] },
  messages,
});
const native = (format: NativeContent["format"], content: unknown[]) => ({ native: { format, content } });
const cleared = { at: "2024-01-02T00:00:00.000Z", toolName: "ls", chars: 5000, tokens: 1250 };
const PLACEHOLDER = "[cleared: 5000 chars of ls output; getMessage returns it]";

// One tool step in each provider's own shape, and the projection the service stores beside it.
const thinking = { type: "thinking", thinking: "list it — 🧠", signature: "EqQB" + "s".repeat(64) };
const anthropicStep = () => [
  msg("USER", "list /tmp"),
  msg("ASSISTANT", "Listing.", { toolCalls: [{ id: "t1", name: "ls", arguments: '{"path":"/tmp"}' }], ...native("anthropic", [thinking, { type: "text", text: "Listing." }, { type: "tool_use", id: "t1", name: "ls", input: { path: "/tmp" } }]) }),
  msg("TOOL", "a.txt", { toolCallId: "t1", ...native("anthropic", [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "a.txt" }], is_error: false }]) }),
];
const reasoning = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "weighing" }], encrypted_content: "gAAAA" + "e".repeat(64) };
const responsesStep = () => [
  msg("USER", "weather?"),
  msg("ASSISTANT", "", { toolCalls: [{ id: "c1", name: "weather", arguments: '{"city":"Porto"}' }], ...native("openai-responses", [reasoning, { type: "function_call", id: "fc_1", call_id: "c1", name: "weather", arguments: '{"city":"Porto"}', status: "completed" }]) }),
  msg("TOOL", "19C", { toolCallId: "c1", ...native("openai-responses", [{ type: "function_call_output", call_id: "c1", output: "19C" }]) }),
];
const signed = { functionCall: { id: "g1", name: "lookup", args: { q: "x" } }, thoughtSignature: "c2ln" + "n".repeat(32) };
const geminiStep = () => [
  msg("USER", "look x up"),
  msg("ASSISTANT", "", { toolCalls: [{ id: "g1", name: "lookup", arguments: '{"q":"x"}' }], ...native("gemini", [{ text: "pondering", thought: true }, signed]) }),
  msg("TOOL", '{"hits":3}', { toolCallId: "g1", ...native("gemini", [{ functionResponse: { id: "g1", name: "lookup", response: { hits: 3 } } }]) }),
];
const aiSdkReasoning = () => msg("ASSISTANT", "Done.", native("ai-sdk", [{ type: "reasoning", text: "secret chain", providerOptions: { anthropic: { signature: "sig-ai" } } }, { type: "text", text: "Done." }]));

const json = (v: unknown) => JSON.stringify(v);

describe("toAnthropicRequest with native content", () => {
  it("sends native messages exactly: thinking with its signature, the tool_result as stored", () => {
    const [u, a, t] = anthropicStep();
    expect(toAnthropicRequest(turn([u!, a!, t!])).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "list /tmp" }] },
      { role: "assistant", content: a!.native!.content },
      { role: "user", content: t!.native!.content },
    ]);
  });

  it("never sends another provider's reasoning: those messages go as their text", () => {
    const out = json(toAnthropicRequest(turn([...responsesStep(), ...geminiStep(), aiSdkReasoning()])));
    for (const secret of [reasoning.encrypted_content, "weighing", signed.thoughtSignature, "pondering", "secret chain", "sig-ai"]) expect(out).not.toContain(secret);
    expect(out).toContain('"tool_use_id":"c1"');
  });

  it("a cleared native result keeps its block with the placeholder as content; a missing one gets a tool_result placeholder", () => {
    const [u, a, t] = anthropicStep();
    const call = { id: "t2", name: "cat", arguments: "{}" };
    const orphanCall = msg("ASSISTANT", "", { toolCalls: [call], ...native("anthropic", [{ type: "tool_use", id: "t2", name: "cat", input: {} }]) });
    const { messages } = toAnthropicRequest(turn([u!, a!, { ...t!, content: PLACEHOLDER, cleared }, orphanCall]));
    expect(messages[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: PLACEHOLDER, is_error: false }] });
    expect(messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: missingResultText(call) }] });
    // The stored content is not touched.
    expect(t!.native!.content[0]).toMatchObject({ content: [{ type: "text", text: "a.txt" }] });
  });
});

describe("toOpenAIResponsesInput", () => {
  it("sends native items exactly, the memory block and the engine's prompt as developer messages first", () => {
    const [u, a, t] = responsesStep();
    expect(toOpenAIResponsesInput(turn([u!, a!, t!]), { system: "You are Frankie." })).toEqual([
      { role: "developer", content: "You are Frankie." },
      { role: "developer", content: "## Earlier Conversation (compacted)\nPostgres." },
      { role: "user", content: "weather?" },
      ...a!.native!.content,
      ...t!.native!.content,
    ]);
  });

  it("converts other formats from their text, reasoning left out", () => {
    const input = toOpenAIResponsesInput(turn([...anthropicStep(), aiSdkReasoning()]));
    expect(json(input)).not.toContain(thinking.signature);
    expect(json(input)).not.toContain("secret chain");
    expect(input.slice(-4)).toEqual([
      { role: "assistant", content: "Listing." },
      { type: "function_call", call_id: "t1", name: "ls", arguments: '{"path":"/tmp"}' },
      { type: "function_call_output", call_id: "t1", output: "a.txt" },
      { role: "assistant", content: "Done." },
    ]);
  });

  it("a cleared native result has the placeholder as output; a missing one a function_call_output placeholder; an orphan is user text", () => {
    const [u, a, t] = responsesStep();
    const call = { id: "c2", name: "ls", arguments: "{}" };
    const input = toOpenAIResponsesInput(
      turn([msg("TOOL", "late", { toolCallId: "gone" }), u!, a!, { ...t!, content: PLACEHOLDER, cleared }, msg("ASSISTANT", "", { toolCalls: [call] })]),
    );
    expect(input.slice(1)).toEqual([
      { role: "user", content: "[tool result for call gone]\nlate" },
      { role: "user", content: "weather?" },
      ...a!.native!.content,
      { type: "function_call_output", call_id: "c1", output: PLACEHOLDER },
      { type: "function_call", call_id: "c2", name: "ls", arguments: "{}" },
      { type: "function_call_output", call_id: "c2", output: missingResultText(call) },
    ]);
  });

  it("with recall: \"message\", the recall section is a user message before the newest user message", () => {
    const t = turn([msg("USER", "first"), msg("ASSISTANT", "ok"), msg("USER", "second")]);
    t.context = { ...t.context, block: `${t.context.staticBlock}\n\n## Recalled From History\nold` };
    expect(toOpenAIResponsesInput(t, { recall: "message" }).slice(-2)).toEqual([
      { role: "user", content: "## Recalled From History\nold" },
      { role: "user", content: "second" },
    ]);
  });
});

describe("toGeminiContents", () => {
  it("sends native parts exactly, thought signatures included; the block is the system instruction", () => {
    const [u, a, t] = geminiStep();
    expect(toGeminiContents(turn([u!, a!, t!]), { system: "You are Frankie." })).toEqual({
      systemInstruction: { parts: [{ text: "You are Frankie." }, { text: "## Earlier Conversation (compacted)\nPostgres." }] },
      contents: [
        { role: "user", parts: [{ text: "look x up" }] },
        { role: "model", parts: a!.native!.content },
        { role: "user", parts: t!.native!.content },
      ],
    });
  });

  it("converts other formats, reasoning left out; all responses to one model content in one user content", () => {
    const calls = [{ id: "a", name: "f", arguments: '{"x":1}' }, { id: "b", name: "g", arguments: "[1]" }];
    const { contents } = toGeminiContents(turn([...anthropicStep(), msg("ASSISTANT", "", { toolCalls: calls }), msg("TOOL", "one", { toolCallId: "a" })]));
    expect(json(contents)).not.toContain(thinking.signature);
    expect(contents.slice(-4)).toEqual([
      { role: "model", parts: [{ text: "Listing." }, { functionCall: { id: "t1", name: "ls", args: { path: "/tmp" } } }] },
      { role: "user", parts: [{ functionResponse: { id: "t1", name: "ls", response: { result: "a.txt" } } }] },
      { role: "model", parts: [{ functionCall: { id: "a", name: "f", args: { x: 1 } } }, { functionCall: { id: "b", name: "g", args: { value: [1] } } }] },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "a", name: "f", response: { result: "one" } } },
          { functionResponse: { id: "b", name: "g", response: { result: missingResultText(calls[1]!) } } },
        ],
      },
    ]);
  });

  it("a cleared native response carries the placeholder as its result", () => {
    const [u, a, t] = geminiStep();
    const { contents } = toGeminiContents(turn([u!, a!, { ...t!, content: PLACEHOLDER, cleared }]));
    expect(contents[2]).toEqual({ role: "user", parts: [{ functionResponse: { id: "g1", name: "lookup", response: { result: PLACEHOLDER } } }] });
  });
});

describe("toOpenAIMessages with native content", () => {
  it("has no native format: every message goes as its text, reasoning of every provider left out", () => {
    const out = json(toOpenAIMessages(turn([...anthropicStep(), ...responsesStep(), ...geminiStep(), aiSdkReasoning()])));
    for (const secret of [thinking.signature, reasoning.encrypted_content, signed.thoughtSignature, "pondering", "secret chain"]) expect(out).not.toContain(secret);
  });

  it("a native message answering two calls gives each call its own result", () => {
    const calls = [{ id: "t1", name: "ls", arguments: "{}" }, { id: "t2", name: "cat", arguments: "{}" }];
    const results = msg("TOOL", "a.txt\nhello", {
      toolCallId: "t1",
      toolCallIds: ["t1", "t2"],
      ...native("anthropic", [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }, { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "hello" }] }]),
    });
    const call = msg("ASSISTANT", "", { toolCalls: calls, ...native("anthropic", calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: {} }))) });
    expect(toOpenAIMessages(turn([msg("USER", "go"), call, results])).slice(-2)).toEqual([
      { role: "tool", tool_call_id: "t1", content: "a.txt" },
      { role: "tool", tool_call_id: "t2", content: "hello" },
    ]);
    // Anthropic gets the stored user message once, whole.
    expect(toAnthropicRequest(turn([msg("USER", "go"), call, results])).messages.at(-1)).toEqual({ role: "user", content: results.native!.content });
  });

  it("a USER message with results beside its text answers its calls where it stands: no placeholder", () => {
    const call = msg("ASSISTANT", "", { toolCalls: [{ id: "t1", name: "ls", arguments: "{}" }], ...native("anthropic", [{ type: "tool_use", id: "t1", name: "ls", input: {} }]) });
    const reply = msg("USER", "a.txt\nand now cat it", {
      toolCallIds: ["t1"],
      ...native("anthropic", [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }, { type: "text", text: "and now cat it" }]),
    });
    expect(toAnthropicRequest(turn([msg("USER", "ls"), call, reply])).messages.slice(1)).toEqual([
      { role: "assistant", content: call.native!.content },
      { role: "user", content: reply.native!.content },
    ]);
    expect(toOpenAIMessages(turn([msg("USER", "ls"), call, reply])).slice(-2)).toEqual([
      { role: "tool", tool_call_id: "t1", content: "a.txt" },
      { role: "user", content: "a.txt\nand now cat it" },
    ]);
  });
});
