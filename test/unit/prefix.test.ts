/**
 * The pieces of "Append-only between folds" (docs/turns.md): the verdict a turn answers as
 * `prefix`, the epoch's first turn, the per-model fold rules and the cache breakpoints of `request`.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "../../core/domain/model.js";
import { foldRulesFor } from "../../core/domain/model-windows.js";
import { replayRequest } from "../../core/domain/native/replay-request.js";
import { openLoopTurn } from "../../core/domain/native/replay-rules.js";
import { selectForCompaction } from "../../core/domain/selector.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { epochSince, markChanged, prefixVerdict, promptCacheKey, replayMark, type ReplayMark } from "../../core/domain/prefix.js";

const mark = (o: Partial<ReplayMark> = {}): ReplayMark => ({ epoch: 2, format: "anthropic", head: "h", recall: "", cleared: 0, open: [], ...o });

describe("prefixVerdict", () => {
  it("keeps the prefix when nothing but appends changed, placeholders added included", () => {
    expect(prefixVerdict(mark(), mark(), "fold")).toEqual({ kept: true });
    expect(prefixVerdict(mark({ open: ["a.r0"] }), mark({ open: ["a.r0", "b.r0"] }), "fold")).toEqual({ kept: true });
  });

  it("names what changed: the first turn, the epoch's reason, the format, a trim, the block, recall, clearing, a late result", () => {
    expect(prefixVerdict(undefined, mark(), undefined)).toEqual({ kept: false, reason: "first_turn" });
    expect(prefixVerdict(mark(), mark({ epoch: 3 }), "fold")).toEqual({ kept: false, reason: "fold" });
    expect(prefixVerdict(mark(), mark({ epoch: 3 }), "revert")).toEqual({ kept: false, reason: "revert" });
    expect(prefixVerdict(mark(), mark({ format: "gemini" }), "fold")).toEqual({ kept: false, reason: "format" });
    expect(prefixVerdict(mark(), mark({ trim: "a..b:3" }), "fold")).toEqual({ kept: false, reason: "trim" });
    expect(prefixVerdict(mark(), mark({ head: "other" }), "fold")).toEqual({ kept: false, reason: "parent" });
    expect(prefixVerdict(mark(), mark({ recall: "r" }), "fold")).toEqual({ kept: false, reason: "recall" });
    expect(prefixVerdict(mark(), mark({ cleared: 1 }), "fold")).toEqual({ kept: false, reason: "clear" });
    expect(prefixVerdict(mark({ open: ["a.r0"] }), mark({ open: [] }), "fold")).toEqual({ kept: false, reason: "tool_result" });
    expect(prefixVerdict(mark({ open: null }), mark({ open: [] }), "fold")).toEqual({ kept: false, reason: "tool_result" });
  });

  it("stores a mark only when it changed", () => {
    expect(markChanged(undefined, mark())).toBe(true);
    expect(markChanged(mark(), mark())).toBe(false);
    expect(markChanged(mark(), mark({ since: "2026-01-01T00:00:00.000Z" }))).toBe(true);
    const built = replayMark({ epoch: 1, format: "plain", staticBlock: "", systemRecall: "", replay: [{ id: "a" }, { id: "b", cleared: {} }, { id: "c.r0", missingResult: true }] });
    expect(built).toEqual({ epoch: 1, format: "plain", head: "", recall: "", cleared: 1, open: ["c.r0"] });
  });
});

describe("the epoch's first turn", () => {
  it("is this turn when the epoch moved, and stays the same for every later turn of the epoch", () => {
    expect(epochSince(undefined, 0, "t1")).toBeUndefined();
    expect(epochSince(mark({ epoch: 1, since: "t0" }), 2, "t1")).toBe("t1");
    expect(epochSince(mark({ epoch: 2, since: "t1" }), 2, "t5")).toBe("t1");
  });
});

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
const message = (n: number, role: Message["role"], extra: Partial<Message>): Message => ({
  id: `m${n}`,
  processId: "p",
  role,
  content: "",
  tags: [],
  createdAt: at(n),
  archivedInMemoryId: null,
  tokens: 5,
  ...extra,
});
const block = { staticBlock: "## Earlier Conversation (compacted)\ns", dynamicBlock: "" };

describe("what a fold may keep", () => {
  const thinking = (n: number) => ({ type: "thinking", thinking: `t${n}`, signature: `s${n}` });
  const anthropicTurn = (n: number, tool: boolean) =>
    message(n, "ASSISTANT", {
      toolCalls: tool ? [{ id: `c${n}`, name: "read", arguments: "{}" }] : undefined,
      native: { format: "anthropic", content: [thinking(n), tool ? { type: "tool_use", id: `c${n}`, name: "read", input: {} } : { type: "text", text: `a${n}` }] },
    });
  const result = (n: number, call: string) => message(n, "TOOL", { toolCallId: call, content: "ok", native: { format: "anthropic", content: [{ type: "tool_result", tool_use_id: call, content: "ok" }] } });

  it("names the models whose reasoning is bound to its prefix", () => {
    const plain = { foldUnit: "tool_group", summary: "before_kept", explicitCacheBreakpoint: false };
    expect(foldRulesFor("claude-fable-5-1")).toEqual({ ...plain, reasoningBeforeSummary: "strip" });
    expect(foldRulesFor("anthropic/claude-sonnet-5-5")).toEqual({ ...plain, reasoningBeforeSummary: "strip" });
    expect(foldRulesFor("gpt-6")).toEqual({ ...plain, reasoningBeforeSummary: "strip", summary: "after_kept", explicitCacheBreakpoint: true });
    expect(foldRulesFor("openai/gpt-5.2-2025-12-11")).toEqual({ ...plain, reasoningBeforeSummary: "strip", summary: "after_kept" });
    expect(foldRulesFor("gpt-4o")).toEqual({ ...plain, reasoningBeforeSummary: "keep" });
    expect(foldRulesFor("claude-sonnet-4-5")).toEqual({ ...plain, reasoningBeforeSummary: "keep" });
    expect(foldRulesFor(undefined)).toEqual({ ...plain, reasoningBeforeSummary: "keep" });
  });

  it("names the models whose folds take whole turns: Gemini's, signatures kept", () => {
    for (const name of ["gemini-3-pro", "google/gemini-3-flash-preview", "gemini-2.5-pro", "gemini"]) {
      expect(foldRulesFor(name)).toEqual({ reasoningBeforeSummary: "keep", foldUnit: "turn", summary: "before_kept", explicitCacheBreakpoint: false });
    }
    // A name boundary, as for the windows: not a prefix match.
    expect(foldRulesFor("geminix-1").foldUnit).toBe("tool_group");
  });

  it("Gemini: kept turns go as stored after a fold, thought signatures included", () => {
    const signed = { functionCall: { id: "c1", name: "run", args: {} }, thoughtSignature: "sig-1" };
    const history = [
      message(0, "USER", { content: "go", native: { format: "gemini", content: [{ text: "go" }] } }),
      message(1, "ASSISTANT", { toolCalls: [{ id: "c1", name: "run", arguments: "{}" }], native: { format: "gemini", content: [signed] } }),
      message(2, "TOOL", { toolCallId: "c1", content: "ok", native: { format: "gemini", content: [{ functionResponse: { id: "c1", name: "run", response: { output: "ok" } } }] } }),
    ];
    const request = replayRequest("gemini", history, block, { stripReasoningBefore: at(9) }) as { contents: Array<{ parts: unknown[] }> };
    expect(request.contents[1]!.parts).toEqual([signed]);
  });

  it("Anthropic: the turns before the epoch lose their thinking, but the newest when it calls tools (an open loop)", () => {
    const history = [message(0, "USER", { content: "go" }), anthropicTurn(1, false), anthropicTurn(2, true), result(3, "c2"), anthropicTurn(5, true), result(6, "c5")];
    const request = replayRequest("anthropic", history, block, { stripReasoningBefore: at(4) }) as { messages: Array<{ content: Array<{ type: string }> }> };
    const types = request.messages.map((m) => m.content.map((b) => b.type));
    expect(types).toEqual([["text"], ["text"], ["thinking", "tool_use"], ["tool_result"], ["thinking", "tool_use"], ["tool_result"]]);
    const newest = replayRequest("anthropic", history, block, { stripReasoningBefore: at(7) }) as { messages: Array<{ content: Array<{ type: string }> }> };
    expect(newest.messages.map((m) => m.content.map((b) => b.type))).toEqual([["text"], ["text"], ["tool_use"], ["tool_result"], ["thinking", "tool_use"], ["tool_result"]]);
  });

  it("Anthropic: a fold inside an unfinished tool loop is cut before the loop's newest call turn, never between a call and its result, and says so", () => {
    // A loop of 12 steps after one user message: HARD folds the turn's older steps, whole.
    const loop = [message(0, "USER", { content: "go" })];
    for (let n = 1; n < 25; n += 2) loop.push(anthropicTurn(n, true), result(n + 1, `c${n}`));
    const { keep } = selectForCompaction(loop, "HARD", DEFAULT_TUNABLES);
    const keptCalls = new Set(keep.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
    expect(keep.filter((m) => m.role === "TOOL").every((m) => keptCalls.has(m.toolCallId!))).toBe(true);
    expect(keep.length).toBeLessThan(loop.length);
    // The fold commits after the newest result: the loop's newest call turn is the one kept with its thinking.
    const before = at(25);
    expect(openLoopTurn(keep, "anthropic", before)?.id).toBe("m23");
    const request = replayRequest("anthropic", keep, block, { stripReasoningBefore: before }) as { messages: Array<{ content: Array<{ type: string }> }> };
    expect(request.messages.filter((m) => m.content.some((b) => b.type === "thinking"))).toHaveLength(1);
    // A loop that had ended (the newest turn answered in text): no turn keeps its thinking.
    expect(openLoopTurn([...keep, anthropicTurn(26, false)], "anthropic", at(27))).toBeUndefined();
    expect(openLoopTurn(keep, "openai-responses", before)).toBeUndefined();
    expect(openLoopTurn(keep, "anthropic", undefined)).toBeUndefined();
  });

  it("OpenAI from gpt-5.6: an explicit cache breakpoint on the memory block's static part, the rest as it was", () => {
    for (const name of ["gpt-5.6", "openai/gpt-5.6-mini", "gpt-5.10", "gpt-6", "gpt-7-pro"]) expect(foldRulesFor(name).explicitCacheBreakpoint, name).toBe(true);
    for (const name of ["gpt-5.5", "gpt-5", "gpt-5-mini", "gpt-4o", "claude-fable-5-1", "gemini-3-pro", "o3"]) expect(foldRulesFor(name).explicitCacheBreakpoint, name).toBe(false);
    const history = [message(0, "USER", { content: "go" }), message(1, "ASSISTANT", { content: "on it", native: { format: "openai-responses", content: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "on it" }] }] } })];
    const two = { staticBlock: "## Summary\nthe plan", dynamicBlock: "## Recalled\nan excerpt" };
    const plainInput = (replayRequest("openai-responses", history, two, {}) as { input: unknown[] }).input;
    const marked = (replayRequest("openai-responses", history, two, { explicitBreakpoint: true }) as { input: unknown[] }).input;
    expect(marked[0]).toEqual({ role: "developer", content: [{ type: "input_text", text: two.staticBlock, prompt_cache_breakpoint: { mode: "explicit" } }] });
    expect(marked.slice(1)).toEqual(plainInput.slice(1));
    // No static part (no summary yet): nothing to mark.
    const empty = { staticBlock: "", dynamicBlock: "" };
    expect(replayRequest("openai-responses", history, empty, { explicitBreakpoint: true })).toEqual(replayRequest("openai-responses", history, empty, {}));
  });

  it("OpenAI Responses: a summary the service wrote is appended after the kept turns and their results, not inserted before them", () => {
    const call = (n: number) => message(n, "ASSISTANT", { toolCalls: [{ id: `call${n}`, name: "run", arguments: "{}" }], native: { format: "openai-responses", content: [{ type: "function_call", call_id: `call${n}`, name: "run", arguments: "{}" }] } });
    const output = (n: number, id: string) => message(n, "TOOL", { toolCallId: id, content: "ok", native: { format: "openai-responses", content: [{ type: "function_call_output", call_id: id, output: "ok" }] } });
    const history = [message(0, "USER", { content: "go" }), call(1), output(2, "call1"), call(3), output(5, "call3"), call(6)];
    const kinds = (o: Parameters<typeof replayRequest>[3]) =>
      (replayRequest("openai-responses", history, block, o) as { input: Array<{ role?: string; type?: string }> }).input.map((i) => i.type ?? i.role);
    expect(kinds({})).toEqual(["developer", "user", "function_call", "function_call_output", "function_call", "function_call_output", "function_call"]);
    // The fold's epoch began at 4: call 3 was kept, its output came after; the block follows the output.
    expect(kinds({ blockAfter: at(4) })).toEqual(["user", "function_call", "function_call_output", "function_call", "function_call_output", "developer", "function_call"]);
    expect(kinds({ blockAfter: at(9) }).at(-1)).toBe("developer");
  });

  it("OpenAI Responses: the turns before the epoch lose every reasoning item", () => {
    const turn = (n: number) =>
      message(n, "ASSISTANT", {
        toolCalls: [{ id: `call${n}`, name: "run", arguments: "{}" }],
        native: { format: "openai-responses", content: [{ type: "reasoning", id: `rs${n}`, summary: [] }, { type: "function_call", call_id: `call${n}`, name: "run", arguments: "{}" }] },
      });
    const request = replayRequest("openai-responses", [turn(1), turn(5)], block, { stripReasoningBefore: at(9) }) as { input: Array<{ type?: string }> };
    expect(request.input.filter((i) => i.type === "reasoning")).toEqual([]);
  });
});

describe("cache breakpoints in request", () => {
  it("Anthropic: the static block and the newest message's last block that can carry one; never a thinking block", () => {
    const history = [message(0, "USER", { content: "go" }), message(1, "ASSISTANT", { native: { format: "anthropic", content: [{ type: "text", text: "x" }, { type: "thinking", thinking: "t", signature: "s" }] } })];
    const request = replayRequest("anthropic", history, block) as { system: Array<Record<string, unknown>>; messages: Array<{ content: Array<Record<string, unknown>> }> };
    expect(request.system[0]!.cache_control).toEqual({ type: "ephemeral" });
    expect(request.messages[0]!.content[0]!.cache_control).toBeUndefined();
    expect(request.messages[1]!.content[0]).toEqual({ type: "text", text: "x", cache_control: { type: "ephemeral" } });
    expect(request.messages[1]!.content[1]!.cache_control).toBeUndefined();
    // The stored content is not marked.
    expect((history[1]!.native!.content[0] as Record<string, unknown>).cache_control).toBeUndefined();
  });

  it("OpenAI: one prompt_cache_key per process, naming neither tenant nor process", () => {
    const key = promptCacheKey({ tenantId: "acme", processId: "p-1" });
    expect(key).toMatch(/^vm-[0-9a-f]{16}$/);
    expect(promptCacheKey({ tenantId: "acme", processId: "p-1" })).toBe(key);
    expect(promptCacheKey({ tenantId: "acme", processId: "p-2" })).not.toBe(key);
    const request = replayRequest("openai-responses", [message(0, "USER", { content: "go" })], block, { cacheKey: key }) as { prompt_cache_key?: string };
    expect(request.prompt_cache_key).toBe(key);
    expect((replayRequest("openai-chat", [], block, { cacheKey: key }) as { prompt_cache_key?: string }).prompt_cache_key).toBe(key);
  });
});
