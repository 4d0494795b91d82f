/**
 * Never an orphan (docs/compaction.md): over random histories with interleaved messages, parallel
 * calls, calls whose result never arrived, results whose call was folded earlier and cleared
 * results, a fold never separates a call from its result, the replay answers every call once, and
 * the prompt helpers build requests that follow the providers' tool rules.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toAnthropicRequest, toOpenAIMessages } from "../../client/prompt-helpers.js";
import type { CompactionModeName, Message, Role, ToolCall } from "../../core/domain/model.js";
import { replayMessages } from "../../core/domain/replay.js";
import { selectForCompaction } from "../../core/domain/selector.js";
import { toolGroups } from "../../core/domain/tool-groups.js";
import { DEFAULT_TUNABLES, type Tunables } from "../../core/domain/tunables.js";
import { anthropicRequestProblems, openAIRequestProblems } from "../support/provider-rules.js";

type Step =
  | { t: "text"; role: Exclude<Role, "TOOL">; content: string; tags: string[] }
  | { t: "orphan"; content: string }
  | { t: "calls"; n: number; content: string; tags: string[] }
  | { t: "result"; back: number; call: number; content: string; tags: string[]; cleared: boolean };

const textArb = fc.oneof(fc.constantFrom("ok", "Let me check.", "", "  ", "The build fails on step 3 because the cache is stale."), fc.string({ maxLength: 40 }));
const tagsArb = fc.constantFrom<string[]>([], [], [], ["STRENGTH:weak"], ["STRENGTH:strong"], ["STRENGTH:pinned"]);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant("text" as const), role: fc.constantFrom<Exclude<Role, "TOOL">>("USER", "ASSISTANT", "SYSTEM"), content: textArb, tags: tagsArb }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("orphan" as const), content: textArb }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("calls" as const), n: fc.integer({ min: 1, max: 3 }), content: textArb, tags: tagsArb }) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant("result" as const),
      // Which earlier call message (counted back) and which of its calls: parallel, late, repeated.
      back: fc.nat({ max: 3 }),
      call: fc.nat({ max: 3 }),
      content: textArb,
      tags: tagsArb,
      cleared: fc.boolean(),
    }),
  },
);

/** Builds stored messages from steps; call ids are unique per call message, results pick any. */
function build(steps: Step[]): Message[] {
  const out: Message[] = [];
  const callMessages: Message[] = [];
  const base = { processId: "p", archivedInMemoryId: null, tokens: 10 };
  steps.forEach((s, i) => {
    const id = `m${String(i).padStart(4, "0")}`;
    const createdAt = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
    if (s.t === "text") out.push({ ...base, id, createdAt, role: s.role, content: s.content, tags: s.tags });
    else if (s.t === "orphan") out.push({ ...base, id, createdAt, role: "TOOL", content: s.content, tags: [], toolCallId: `gone${i}` });
    else if (s.t === "calls") {
      const toolCalls: ToolCall[] = Array.from({ length: s.n }, (_, k) => ({ id: `call_${i}_${k}`, name: `tool${k}`, arguments: k === 2 ? "not json" : `{"k":${k}}` }));
      const m: Message = { ...base, id, createdAt, role: "ASSISTANT", content: s.content, tags: s.tags, toolCalls };
      out.push(m);
      callMessages.push(m);
    } else {
      const owner = callMessages[callMessages.length - 1 - Math.min(s.back, callMessages.length - 1)];
      const toolCallId = owner ? owner.toolCalls![s.call % owner.toolCalls!.length]!.id : `none${i}`;
      const cleared = s.cleared ? { at: createdAt, toolName: "tool", chars: s.content.length, tokens: 10 } : undefined;
      out.push({ ...base, id, createdAt, role: "TOOL", content: s.content, tags: s.tags, toolCallId, ...(cleared ? { cleared } : {}) });
    }
  });
  return out;
}

const historyArb = fc.array(stepArb, { maxLength: 40 }).map(build);
const modeArb = fc.constantFrom<CompactionModeName>("NONE", "SOFT", "HARD", "EMERGENCY");
const tunablesArb: fc.Arbitrary<Tunables> = fc
  .record({ keepRecent: fc.nat({ max: 8 }), softAnchor: fc.nat({ max: 6 }), hardAnchor: fc.nat({ max: 6 }), emergencyAnchor: fc.nat({ max: 6 }) })
  .map((t) => ({ ...DEFAULT_TUNABLES, ...t }));
const turnOf = (messages: Message[]) => ({ context: { block: "## Earlier Conversation (compacted)\nsummary", staticBlock: "## Earlier Conversation (compacted)\nsummary", sections: [] }, messages });
const runs = { numRuns: 500 };

describe("never an orphan", () => {
  it("a fold takes a call with all its results or none of them, also inside the current turn", () => {
    fc.assert(
      fc.property(historyArb, modeArb, tunablesArb, (messages, mode, t) => {
        const folded = new Set(selectForCompaction(messages, mode, t).fold.map((m) => m.id));
        const { group } = toolGroups(messages);
        messages.forEach((m, i) => expect(folded.has(m.id)).toBe(folded.has(messages[group[i]!]!.id)));
      }),
      runs,
    );
  });

  it("the replay of what stays answers every tool call exactly once after it", () => {
    fc.assert(
      fc.property(historyArb, modeArb, tunablesArb, (messages, mode, t) => {
        const replay = replayMessages(selectForCompaction(messages, mode, t).keep);
        replay.forEach((m, i) => {
          for (const call of m.toolCalls ?? []) {
            const later = replay.slice(i + 1);
            const next = later.findIndex((n) => n.toolCalls?.some((c) => c.id === call.id));
            const scope = next < 0 ? later : later.slice(0, next);
            expect(scope.filter((n) => n.role === "TOOL" && n.toolCallId === call.id).length).toBeGreaterThanOrEqual(1);
          }
        });
        // Cleared results show their placeholder; nothing stored is changed.
        for (const m of replay) if (m.cleared) expect(m.content).toContain(`message ${m.id}`);
      }),
      runs,
    );
  });

  it("the helpers build OpenAI and Anthropic requests that follow the providers' tool rules", () => {
    fc.assert(
      fc.property(historyArb, modeArb, tunablesArb, fc.boolean(), (messages, mode, t, viaReplay) => {
        const keep = selectForCompaction(messages, mode, t).keep;
        // Through the service's replay, and straight from stored messages (an older service).
        const turn = turnOf(viaReplay ? replayMessages(keep) : keep);
        expect(openAIRequestProblems(toOpenAIMessages(turn, { system: "You are a coding agent." }))).toEqual([]);
        const anthropic = toAnthropicRequest(turn, { cacheConversation: true });
        if (anthropic.messages.length > 0) expect(anthropicRequestProblems(anthropic.messages)).toEqual([]);
      }),
      runs,
    );
  });

  it("the rule checks catch what the providers reject", () => {
    const call = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };
    expect(openAIRequestProblems([{ role: "user", content: "x" }, { role: "assistant", content: null, tool_calls: [call] }, { role: "user", content: "y" }])).not.toEqual([]);
    expect(openAIRequestProblems([{ role: "user", content: "x" }, { role: "tool", content: "r", tool_call_id: "c1" }])).not.toEqual([]);
    const use = { type: "tool_use", id: "u1", name: "f", input: {} };
    expect(anthropicRequestProblems([{ role: "user", content: [{ type: "text", text: "x" }] }, { role: "assistant", content: [use] }, { role: "user", content: [{ type: "text", text: "y" }] }])).not.toEqual([]);
    expect(anthropicRequestProblems([{ role: "user", content: [{ type: "tool_result", tool_use_id: "u1" }] }])).not.toEqual([]);
  });
});
