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
    const plan = planClearing(messages, tunables, 32_000, AT);
    const results = messages.filter((m) => m.role === "TOOL");
    expect(plan.clear.map((c) => c.message.id)).toEqual(results.slice(0, 7).map((m) => m.id));
    expect(plan.clear.map((c) => c.cleared.toolName)).toEqual(["read_file", "grep", "read_file", "grep", "read_file", "grep", "read_file"]);
    expect(plan.clear[0]!.cleared).toEqual({ at: AT, toolName: "read_file", chars: 4096, tokens: results[0]!.tokens });
    expect(plan.tokensFreed).toBe(plan.clear.reduce((n, c) => n + c.message.tokens - clearedTokens(c.message, c.cleared), 0));
    expect(plan.reason).toBeUndefined();
  });

  it("waits while the batch would free less than clearMinSaving of the window", () => {
    const messages = loop(4); // one result outside the newest 3: ~1 000 tokens
    expect(planClearing(messages, tunables, 128_000, AT)).toEqual({ clear: [], tokensFreed: 0, reason: "below_min_saving" });
    expect(planClearing(messages, tunables, 16_000, AT).clear).toHaveLength(1);
  });

  it("skips small, pinned, strong and already cleared results", () => {
    const messages = loop(8);
    const results = messages.filter((m) => m.role === "TOOL");
    results[0]!.tags = ["STRENGTH:pinned"];
    results[1]!.tags = ["STRENGTH:strong"];
    results[2]!.cleared = { at: AT, toolName: "read_file", chars: 4096, tokens: 1030 };
    const small = msg("TOOL", "short", { toolCallId: "c3" });
    messages[messages.indexOf(results[3]!)] = small;
    const plan = planClearing(messages, { ...tunables, clearMinSaving: 0.001 }, 32_000, AT);
    expect(plan.clear.map((c) => c.message.id)).toEqual([results[4]!.id]);
  });

  it("names a result whose call was folded earlier as coming from an unknown tool", () => {
    const messages = [msg("TOOL", big(4), { toolCallId: "gone" }), ...loop(3)];
    const plan = planClearing(messages, { ...tunables, clearMinSaving: 0.001 }, 32_000, AT);
    expect(plan.clear.map((c) => c.cleared.toolName)).toEqual([UNKNOWN_TOOL]);
  });

  it("has nothing to clear in a conversation without tool results", () => {
    const messages = [msg("USER", big(8)), msg("ASSISTANT", big(8))];
    expect(planClearing(messages, tunables, 8_000, AT)).toMatchObject({ clear: [], reason: "nothing_clearable" });
  });
});
