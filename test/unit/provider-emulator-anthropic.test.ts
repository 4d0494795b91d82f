/**
 * The emulator's Anthropic rules on thinking blocks, as pure functions: signing, the tool-loop
 * rule, the signature check and the prefix check with and without `drop_block`.
 */
import { describe, expect, it } from "vitest";
import {
  anthropicPrefixHash,
  buildAnthropicMessage,
  checkAnthropicRequest,
  signThinking,
  type IssuedAnthropicTurn,
} from "../../tools/provider-emulator/anthropic-rules.js";
import { createSigner } from "../../tools/provider-emulator/signing.js";

const signer = createSigner();
const tool = { name: "read_log", description: "Reads a CI log", input_schema: { type: "object", properties: {} } };
const firstRequest = {
  model: "claude-fable-5-1",
  max_tokens: 4096,
  thinking: { type: "enabled", budget_tokens: 2048 },
  system: "You keep CI green.",
  tools: [tool],
  messages: [{ role: "user", content: "Why does ci-7 fail?" }],
};

/** A two-request tool loop: the first answer, and the request that sends it back with a result. */
function toolLoop(script: Parameters<typeof buildAnthropicMessage>[1] = {}) {
  const issued = new Map<string, IssuedAnthropicTurn>();
  const answer = buildAnthropicMessage(
    firstRequest,
    { thinking: "Read the log before guessing.", toolUses: [{ id: "toolu_1", name: "read_log", input: {} }], ...script },
    { signer, id: "msg_1" },
  );
  issued.set(answer.issued.key, answer.issued);
  const second: any = {
    ...firstRequest,
    messages: [
      ...firstRequest.messages,
      { role: "assistant", content: structuredClone(answer.body.content) },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ERROR: node 18 is not supported" }] },
    ],
  };
  return { issued, answer, second };
}

describe("Anthropic thinking rules", () => {
  it("answers with a signed thinking block first, then the scripted tool call", () => {
    const { answer } = toolLoop();
    expect(answer.body.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use"]);
    expect(answer.body.content[0].signature).toMatch(/^[A-Za-z0-9+/=]{80,}$/);
    expect(answer.body.stop_reason).toBe("tool_use");
    expect(answer.issued.thinking).toEqual([
      { path: "messages.1.content.0", type: "thinking", token: answer.body.content[0].signature },
    ]);
  });

  it("answers without thinking when the request does not turn it on", () => {
    const { thinking: _off, ...plain } = firstRequest;
    const answer = buildAnthropicMessage(plain, { text: "hi" }, { signer, id: "msg_x" });
    expect(answer.body.content).toEqual([{ type: "text", text: "hi" }]);
    expect(answer.issued.thinking).toEqual([]);
  });

  it("returns an empty, still signed thinking block when display is omitted, and verifies it sent back", () => {
    const omitted = { ...firstRequest, thinking: { ...firstRequest.thinking, display: "omitted" } };
    const answer = buildAnthropicMessage(omitted, { thinking: "secret", toolUses: [{ id: "toolu_o", name: "read_log" }] }, { signer, id: "m_o" });
    expect(answer.body.content[0]).toMatchObject({ type: "thinking", thinking: "", signature: expect.any(String) });
    const issued = new Map([[answer.issued.key, answer.issued]]);
    const second = {
      ...omitted,
      messages: [
        ...omitted.messages,
        { role: "assistant", content: answer.body.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_o", content: "ok" }] },
      ],
    };
    expect(checkAnthropicRequest(second, { signer, issued }).ok).toBe(true);
  });

  it("verifies a thinking block sent back unchanged in the tool loop", () => {
    const { issued, second } = toolLoop();
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(check.ok && check.verified.map((v) => v.path)).toEqual(["messages.1.content.0"]);
  });

  it("rejects a tool loop whose assistant turn lost its thinking block, in the API's words", () => {
    const { issued, second } = toolLoop();
    second.messages[1].content = second.messages[1].content.filter((b: any) => b.type !== "thinking");
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.rule).toBe("tool_loop_thinking_missing");
    expect(check.body).toEqual({ type: "error", error: { type: "invalid_request_error", message: check.message } });
    expect(check.message).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
  });

  it("accepts a tool loop without thinking when adaptive thinking issued the turn without it", () => {
    const adaptive = { ...firstRequest, thinking: { type: "adaptive" } };
    const issued = new Map<string, IssuedAnthropicTurn>();
    const answer = buildAnthropicMessage(adaptive, { thinking: false, toolUses: [{ id: "toolu_9", name: "read_log" }] }, { signer, id: "m" });
    issued.set(answer.issued.key, answer.issued);
    const second = {
      ...adaptive,
      messages: [
        ...adaptive.messages,
        { role: "assistant", content: answer.body.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "ok" }] },
      ],
    };
    expect(checkAnthropicRequest(second, { signer, issued }).ok).toBe(true);
  });

  it("rejects a thinking block whose text was edited, naming its path", () => {
    const { issued, second } = toolLoop();
    second.messages[1].content[0].thinking += " (edited)";
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(!check.ok && [check.rule, check.message]).toEqual([
      "thinking_signature_invalid",
      "messages.1.content.0: Invalid `signature` in `thinking` block.",
    ]);
  });

  it("rejects a signature issued by another emulator's secret", () => {
    const { issued, second } = toolLoop();
    const foreign = buildAnthropicMessage(firstRequest, { thinking: "Read the log before guessing." }, { signer: createSigner(), id: "x" });
    second.messages[1].content[0] = foreign.body.content[0];
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(!check.ok && check.rule).toBe("thinking_signature_invalid");
  });

  it("rejects a block whose system prompt changed with the bound-to-a-different-conversation error", () => {
    const { issued, second } = toolLoop();
    second.system = "You keep CI green. Today is Tuesday.";
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(!check.ok && check.rule).toBe("thinking_prefix_mismatch");
    expect(!check.ok && check.message).toBe(
      'messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".',
    );
  });

  it("treats changed tools and an edited earlier message as prefix changes", () => {
    const a = toolLoop();
    a.second.tools = [{ ...tool, description: "Reads a log" }];
    expect(checkAnthropicRequest(a.second, { signer, issued: a.issued }).ok).toBe(false);
    const b = toolLoop();
    b.second.messages[0] = { role: "user", content: "Why does ci-8 fail?" };
    expect(checkAnthropicRequest(b.second, { signer, issued: b.issued }).ok).toBe(false);
  });

  it("does not count key order, cache_control or string-vs-block content as a change", () => {
    const { issued, second } = toolLoop();
    second.system = [{ type: "text", text: "You keep CI green.", cache_control: { type: "ephemeral" } }];
    second.messages[0] = { content: [{ text: "Why does ci-7 fail?", type: "text" }], role: "user" };
    second.tools = [{ input_schema: tool.input_schema, description: tool.description, name: tool.name }];
    expect(checkAnthropicRequest(second, { signer, issued }).ok).toBe(true);
  });

  it("with drop_block, drops the mismatched block and lists it in input_transformations", () => {
    const { issued, second } = toolLoop();
    second.system = "Changed.";
    second.thinking = { ...second.thinking, block_binding: { prefix_mismatch_behavior: "drop_block" } };
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.verified).toEqual([]);
    expect(check.dropped.map((d) => [d.path, d.reason])).toEqual([["messages.1.content.0", "prefix_binding_mismatch"]]);
    expect(check.inputTransformations).toEqual([
      { type: "thinking_dropped", path: "messages.1.content.0", reason: "prefix_binding_mismatch" },
    ]);
  });

  it("drops the rest of the turn's consecutive thinking blocks with the failing one", () => {
    const { issued, second } = toolLoop();
    const [first, ...rest] = second.messages[1].content;
    // A second, interleaved block, valid where it stands until the system prompt changes.
    const text = "Then check the runner.";
    const later = { type: "thinking", thinking: text, signature: signThinking(signer, text, anthropicPrefixHash(second, 1, [first])) };
    second.messages[1].content = [first, later, ...rest];
    expect(checkAnthropicRequest(second, { signer, issued }).ok).toBe(true);
    second.system = "Changed.";
    second.thinking = { ...second.thinking, block_binding: { prefix_mismatch_behavior: "drop_block" } };
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(check.ok && check.dropped.map((d) => d.path)).toEqual(["messages.1.content.0", "messages.1.content.1"]);
  });

  it("keeps a block valid when only what comes after it changes", () => {
    const { issued, second } = toolLoop();
    second.messages[2].content[0].content = "ERROR: shortened";
    const check = checkAnthropicRequest(second, { signer, issued });
    expect(check.ok && check.verified).toHaveLength(1);
  });

  it("after an edit in the middle, keeps the thinking before it and drops only the thinking after it", () => {
    const { issued, second } = toolLoop();
    const answer = buildAnthropicMessage(second, { thinking: "Node 18 it is.", toolUses: [{ id: "toolu_2", name: "read_log" }] }, { signer, id: "msg_2" });
    issued.set(answer.issued.key, answer.issued);
    const third: any = {
      ...second,
      thinking: { ...second.thinking, block_binding: { prefix_mismatch_behavior: "drop_block" } },
      messages: [
        ...structuredClone(second.messages),
        { role: "assistant", content: answer.body.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "ok" }] },
      ],
    };
    expect(checkAnthropicRequest(third, { signer, issued }).ok).toBe(true);
    third.messages[2].content[0].content = "ERROR: shortened";
    const check = checkAnthropicRequest(third, { signer, issued });
    expect(check.ok && [check.verified.map((v) => v.path), check.dropped.map((d) => d.path)]).toEqual([
      ["messages.1.content.0"],
      ["messages.3.content.0"],
    ]);
  });

  it("ignores prefix changes for models without preserved thinking", () => {
    const { issued, second } = toolLoop();
    second.system = "Changed.";
    expect(checkAnthropicRequest(second, { signer, issued, preservedThinking: false }).ok).toBe(true);
  });

  it("binds a redacted_thinking block the same way", () => {
    const { issued, second } = toolLoop({ redacted: true });
    expect(second.messages[1].content[0].type).toBe("redacted_thinking");
    expect(checkAnthropicRequest(second, { signer, issued }).ok).toBe(true);
    const tampered = structuredClone(second);
    tampered.messages[1].content[0].data = tampered.messages[1].content[0].data.replace(/^./, (c: string) => (c === "A" ? "B" : "A"));
    const check = checkAnthropicRequest(tampered, { signer, issued });
    expect(!check.ok && check.message).toBe("messages.1.content.0: Invalid `signature` in `redacted_thinking` block.");
  });

  it("rejects manual thinking with a tool_choice that forces tool use, but not adaptive thinking", () => {
    const forced = { ...firstRequest, tool_choice: { type: "any" } };
    const check = checkAnthropicRequest(forced, { signer, issued: new Map() });
    expect(!check.ok && check.rule).toBe("forced_tool_use_with_thinking");
    expect(checkAnthropicRequest({ ...forced, thinking: { type: "adaptive" } }, { signer, issued: new Map() }).ok).toBe(true);
    expect(checkAnthropicRequest({ ...firstRequest, tool_choice: { type: "auto" } }, { signer, issued: new Map() }).ok).toBe(true);
  });

  it("hashes the prefix of a block from system, tools, earlier messages and earlier blocks only", () => {
    const base = anthropicPrefixHash(firstRequest, 1, []);
    expect(anthropicPrefixHash({ ...firstRequest, max_tokens: 1 }, 1, [])).toBe(base);
    expect(anthropicPrefixHash(firstRequest, 1, [{ type: "text", text: "x" }])).not.toBe(base);
    expect(anthropicPrefixHash({ ...firstRequest, system: "other" }, 1, [])).not.toBe(base);
  });
});
