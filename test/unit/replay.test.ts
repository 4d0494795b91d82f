import { describe, expect, it } from "vitest";
import { planClearing, UNKNOWN_TOOL } from "../../core/domain/clearing.js";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { clearedPlaceholder, clearedTokens, missingResultText, replayMessages } from "../../core/domain/replay.js";
import { messageTokens } from "../../core/domain/tokens.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";

let seq = 0;
function msg(role: Role, content: string, extra: Partial<Message> = {}): Message {
  const draft = {
    id: `m${String(seq++).padStart(4, "0")}`,
    processId: "p1",
    role,
    content,
    tags: [],
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
    archivedInMemoryId: null,
    ...extra,
  };
  return { ...draft, tokens: extra.tokens ?? messageTokens(draft) };
}
const call = (id: string, name = "read_file"): ToolCall => ({ id, name, arguments: `{"path":"${id}.ts"}` });
const AT = "2025-01-01T00:00:00.000Z";
const big = (kb: number) => "x".repeat(kb * 1024);

describe("replayMessages", () => {
  it("shows a cleared result as a placeholder naming the tool, the size, the message id and how to fetch it", () => {
    const a = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const cleared = { at: AT, toolName: "read_file", chars: 6144, tokens: 1540 };
    const t = msg("TOOL", big(6), { toolCallId: "c1", cleared, tokens: 60 });
    const [, shown] = replayMessages([a, t]);
    expect(shown!.content).toBe(clearedPlaceholder(t, cleared));
    expect(shown!.content).toContain("read_file");
    expect(shown!.content).toContain("6144 chars");
    expect(shown!.content).toContain(t.id);
    expect(shown!.content).toContain(`GET /v1/processes/p1/messages/${t.id}`);
    expect(shown).toMatchObject({ id: t.id, toolCallId: "c1", cleared });
    // Stable: built from stored fields only, so every later turn shows the same bytes.
    expect(replayMessages([a, t])[1]!.content).toBe(shown!.content);
    expect(t.content).toBe(big(6));
  });

  it("answers a call whose result never came with a placeholder result right after the call", () => {
    const a = msg("ASSISTANT", "Reading both.", { toolCalls: [call("c1"), call("c2", "grep")] });
    const t1 = msg("TOOL", "one", { toolCallId: "c1" });
    const u = msg("USER", "and?");
    const out = replayMessages([a, t1, u]);
    expect(out.map((m) => m.id)).toEqual([a.id, `${a.id}.r1`, t1.id, u.id]);
    expect(out[1]).toMatchObject({ role: "TOOL", toolCallId: "c2", missingResult: true, content: missingResultText(call("c2", "grep")) });
    expect(out[1]!.tokens).toBe(messageTokens(out[1]!));
  });

  it("leaves a result whose call was folded earlier, and complete groups, as they are", () => {
    const orphan = msg("TOOL", "late result", { toolCallId: "gone" });
    const a = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const t = msg("TOOL", "done", { toolCallId: "c1" });
    expect(replayMessages([orphan, a, t])).toEqual([orphan, a, t]);
  });

  it("gives a reused call id's result to the nearest earlier call and answers the older one with a placeholder", () => {
    const a1 = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const a2 = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const t = msg("TOOL", "done", { toolCallId: "c1" });
    expect(replayMessages([a1, a2, t]).map((m) => m.id)).toEqual([a1.id, `${a1.id}.r0`, a2.id, t.id]);
  });
});

describe("planClearing", () => {
  const tunables = { ...DEFAULT_TUNABLES, keepToolResults: 3, clearMinResultTokens: 250, clearMinSaving: 0.05 };
  // At EMERGENCY the anchor is 3 messages: the older tests see keepToolResults alone decide.
  const EMERGENCY = 0.96;
  function loop(n: number, kb = 4): Message[] {
    const out = [msg("USER", "Fix the failing tests.")];
    for (let i = 0; i < n; i++) {
      out.push(msg("ASSISTANT", "", { toolCalls: [call(`c${i}`, i % 2 ? "grep" : "read_file")] }));
      out.push(msg("TOOL", big(kb), { toolCallId: `c${i}` }));
    }
    return out;
  }

  it("clears every result outside the newest keepToolResults in one batch, naming each result's tool", () => {
    const messages = loop(10);
    const plan = planClearing(messages, tunables, { contextWindow: 32_000, ratio: EMERGENCY, at: AT, epoch: 1 });
    const results = messages.filter((m) => m.role === "TOOL");
    expect(plan.clear.map((c) => c.message.id)).toEqual(results.slice(0, 7).map((m) => m.id));
    expect(plan.clear.map((c) => c.cleared.toolName)).toEqual(["read_file", "grep", "read_file", "grep", "read_file", "grep", "read_file"]);
    expect(plan.clear[0]!.cleared).toEqual({ at: AT, toolName: "read_file", chars: 4096, tokens: results[0]!.tokens, epoch: 1 });
    expect(plan.tokensFreed).toBe(plan.clear.reduce((n, c) => n + c.message.tokens - clearedTokens(c.message, c.cleared), 0));
    expect(plan.reason).toBeUndefined();
  });

  it("keeps a failed command's first error lines in its placeholder, and none of a file's contents", () => {
    const messages = [
      msg("USER", "Fix the failing tests."),
      msg("ASSISTANT", "", { toolCalls: [{ id: "b1", name: "Bash", arguments: '{"command":"npm test"}' }] }),
      msg("TOOL", `${big(4)}\nFAIL src/a.test.ts\nExit code: 1`, { toolCallId: "b1" }),
      msg("ASSISTANT", "", { toolCalls: [{ id: "r1", name: "Read", arguments: '{"file_path":"src/err.ts"}' }] }),
      msg("TOOL", `throw new Error("x");\n${big(4)}`, { toolCallId: "r1" }),
      ...loop(4).slice(1),
    ];
    const plan = planClearing(messages, tunables, { contextWindow: 32_000, ratio: EMERGENCY, at: AT, epoch: 1 });
    const [bash, read] = plan.clear;
    expect(bash!.cleared.errors).toEqual(["FAIL src/a.test.ts"]);
    expect(read!.cleared.errors).toBeUndefined();
    const shown = replayMessages(messages.map((m) => (m.id === bash!.message.id ? { ...m, cleared: bash!.cleared } : m))).find((m) => m.id === bash!.message.id)!;
    expect(shown.content).toContain("errors: FAIL src/a.test.ts; full text: message");
  });

  it("waits while the batch would free less than clearMinSaving of the window", () => {
    const messages = loop(4); // one result outside the newest 3: ~1 000 tokens
    expect(planClearing(messages, tunables, { contextWindow: 128_000, ratio: EMERGENCY, at: AT, epoch: 1 })).toEqual({ clear: [], tokensFreed: 0, reason: "below_min_saving" });
    expect(planClearing(messages, tunables, { contextWindow: 16_000, ratio: EMERGENCY, at: AT, epoch: 1 }).clear).toHaveLength(1);
  });

  it("skips small, pinned, strong and already cleared results", () => {
    const messages = loop(8);
    const results = messages.filter((m) => m.role === "TOOL");
    results[0]!.tags = ["STRENGTH:pinned"];
    results[1]!.tags = ["STRENGTH:strong"];
    results[2]!.cleared = { at: AT, toolName: "read_file", chars: 4096, tokens: 1030 };
    const small = msg("TOOL", "short", { toolCallId: "c3" });
    messages[messages.indexOf(results[3]!)] = small;
    const plan = planClearing(messages, { ...tunables, clearMinSaving: 0.001 }, { contextWindow: 32_000, ratio: EMERGENCY, at: AT, epoch: 1 });
    expect(plan.clear.map((c) => c.message.id)).toEqual([results[4]!.id]);
  });

  it("names a result whose call was folded earlier as coming from an unknown tool", () => {
    const messages = [msg("TOOL", big(4), { toolCallId: "gone" }), ...loop(3)];
    const plan = planClearing(messages, { ...tunables, clearMinSaving: 0.001 }, { contextWindow: 32_000, ratio: EMERGENCY, at: AT, epoch: 1 });
    expect(plan.clear.map((c) => c.cleared.toolName)).toEqual([UNKNOWN_TOOL]);
  });

  it("has nothing to clear in a conversation without tool results", () => {
    const messages = [msg("USER", big(8)), msg("ASSISTANT", big(8))];
    expect(planClearing(messages, tunables, { contextWindow: 8_000, ratio: EMERGENCY, at: AT, epoch: 1 })).toMatchObject({ clear: [], reason: "nothing_clearable" });
  });

  it("keeps every result newer than the last ASSISTANT message: the model has not read it yet", () => {
    // An engine appends the results of parallel calls and asks for the turn before the model answers.
    const messages = loop(6);
    const parallel = [0, 1, 2, 3, 4].map((i) => msg("TOOL", big(4), { toolCallId: `p${i}` }));
    messages.push(msg("ASSISTANT", "", { toolCalls: [0, 1, 2, 3, 4].map((i) => call(`p${i}`)) }), ...parallel);
    const loose = { ...tunables, keepToolResults: 0, emergencyAnchor: 0, clearMinSaving: 0.001 };
    const plan = planClearing(messages, loose, { contextWindow: 32_000, ratio: EMERGENCY, at: AT, epoch: 1 });
    const read = messages.filter((m) => m.role === "TOOL" && !parallel.includes(m));
    expect(plan.clear.map((c) => c.message.id)).toEqual(read.map((m) => m.id));
  });

  it("keeps every result when no ASSISTANT message is active: none of them was read", () => {
    const messages = [msg("USER", "Here are the logs."), msg("TOOL", big(4), { toolCallId: "gone1" }), msg("TOOL", big(4), { toolCallId: "gone2" })];
    const loose = { ...tunables, keepToolResults: 0, emergencyAnchor: 0, clearMinSaving: 0.001 };
    expect(planClearing(messages, loose, { contextWindow: 32_000, ratio: EMERGENCY, at: AT, epoch: 1 })).toMatchObject({ clear: [], reason: "nothing_clearable" });
  });

  it("keeps the results inside the anchor of the mode the prompt is in", () => {
    const messages = loop(10); // 21 messages, a result every second one
    const results = messages.filter((m) => m.role === "TOOL");
    const loose = { ...tunables, keepToolResults: 0, clearMinSaving: 0.001, softAnchor: 10, hardAnchor: 6, emergencyAnchor: 2 };
    const cleared = (ratio: number) => planClearing(messages, loose, { contextWindow: 32_000, ratio, at: AT, epoch: 1 }).clear.map((c) => c.message.id);
    // SOFT (0.6 of the window): the newest 10 messages hold 5 results.
    expect(cleared(0.6)).toEqual(results.slice(0, 5).map((m) => m.id));
    // HARD: the newest 6 hold 3.
    expect(cleared(0.86)).toEqual(results.slice(0, 7).map((m) => m.id));
    // EMERGENCY: the newest 2 hold the last result, which is also unread (after the last ASSISTANT).
    expect(cleared(0.96)).toEqual(results.slice(0, 9).map((m) => m.id));
  });

  it("never clears below softThreshold, whatever clearThreshold says", () => {
    const messages = loop(10);
    const low = { ...tunables, softThreshold: 0.5, clearThreshold: 0.3, softAnchor: 0, clearMinSaving: 0.001 };
    expect(planClearing(messages, low, { contextWindow: 32_000, ratio: 0.49, at: AT, epoch: 1 })).toEqual({ clear: [], tokensFreed: 0, reason: "below_threshold" });
    expect(planClearing(messages, low, { contextWindow: 32_000, ratio: 0.5, at: AT, epoch: 1 }).clear).toHaveLength(7);
    const usual = { ...tunables, softAnchor: 0, clearMinSaving: 0.001 };
    expect(planClearing(messages, usual, { contextWindow: 32_000, ratio: 0.59, at: AT, epoch: 1 }).reason).toBe("below_threshold");
    expect(planClearing(messages, usual, { contextWindow: 32_000, ratio: 0.6, at: AT, epoch: 1 }).clear).toHaveLength(7);
    expect(planClearing(messages, usual, { contextWindow: 32_000, ratio: Number.NaN, at: AT, epoch: 1 }).reason).toBe("below_threshold");
  });
});
