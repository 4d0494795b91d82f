/**
 * Append-only between folds (docs/turns.md): over arbitrary histories of user and system notes,
 * tool calls (parallel ones included), results in any order, and native content, whenever the
 * replay mark of a turn says its prompt kept the previous turn's, the request of every format
 * starts with the previous request, element for element. The oracle (`requestBreak`) compares the
 * two requests themselves and shares no code with the mark.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { requestBreak, plainPrompt } from "../../tools/prefix-check.js";
import type { Message, Role } from "../../core/domain/model.js";
import { ReplayFormat } from "../../core/domain/native/formats.js";

const REPLAY_FORMATS = ReplayFormat.options;
import { replayRequest } from "../../core/domain/native/replay-request.js";
import { prefixVerdict, replayMark } from "../../core/domain/prefix.js";
import { replayMessages } from "../../core/domain/replay.js";

type Step =
  | { t: "note"; role: "USER" | "SYSTEM" | "ASSISTANT"; native: boolean }
  | { t: "calls"; n: number; native: boolean }
  | { t: "result"; pick: number; native: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constant("note" as const), role: fc.constantFrom("USER" as const, "SYSTEM" as const, "ASSISTANT" as const), native: fc.boolean() }),
  fc.record({ t: fc.constant("calls" as const), n: fc.integer({ min: 1, max: 3 }), native: fc.boolean() }),
  fc.record({ t: fc.constant("result" as const), pick: fc.nat({ max: 4 }), native: fc.boolean() }),
);

/** Stored messages from steps; native ones in the Anthropic format (the others are converted for it). */
function build(steps: Step[]): Message[] {
  const out: Message[] = [];
  const waiting: string[] = [];
  const push = (role: Role, content: string, extra: Partial<Message> = {}) => {
    const i = out.length;
    out.push({
      id: `m${String(i).padStart(4, "0")}`,
      processId: "p",
      role,
      content,
      tags: [],
      createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
      archivedInMemoryId: null,
      tokens: 10,
      ...extra,
    });
  };
  for (const s of steps) {
    const i = out.length;
    if (s.t === "note") {
      const text = `${s.role.toLowerCase()} note ${i}`;
      const native = s.native && s.role !== "SYSTEM" ? { native: { format: "anthropic" as const, content: s.role === "ASSISTANT" ? [{ type: "thinking", thinking: `t${i}`, signature: `s${i}` }, { type: "text", text }] : [{ type: "text", text }] } } : {};
      push(s.role, text, native);
    } else if (s.t === "calls") {
      const calls = Array.from({ length: s.n }, (_, k) => ({ id: `c${i}_${k}`, name: "read", arguments: `{"k":${k}}` }));
      waiting.push(...calls.map((c) => c.id));
      const native = s.native
        ? { native: { format: "anthropic" as const, content: [{ type: "thinking", thinking: `t${i}`, signature: `s${i}` }, ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments) }))] } }
        : {};
      push("ASSISTANT", "", { toolCalls: calls, ...native });
    } else if (waiting.length > 0) {
      const [id] = waiting.splice(s.pick % waiting.length, 1);
      const native = s.native ? { native: { format: "anthropic" as const, content: [{ type: "tool_result", tool_use_id: id!, content: `result ${i}` }] } } : {};
      push("TOOL", `result ${i}`, { toolCallId: id!, ...native });
    }
  }
  return out;
}

const block = { staticBlock: "## Earlier Conversation (compacted)\nsummary", dynamicBlock: "" };
const markOf = (format: string, replay: Message[]) =>
  replayMark({ epoch: 3, format, staticBlock: block.staticBlock, systemRecall: "", replay });

describe("a turn whose mark says the prefix was kept", () => {
  it("answers, in every format and in the plain answer, a request that starts with the previous one", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.nat(), (steps, cutAt) => {
        const history = build(steps);
        const k = 1 + (cutAt % history.length);
        const before = replayMessages(history.slice(0, k));
        const now = replayMessages(history);
        for (const format of [...REPLAY_FORMATS, "plain"] as const) {
          const verdict = prefixVerdict(markOf(format, before), markOf(format, now), undefined);
          if (!verdict.kept) {
            // The only break a mark reports here: a placeholder whose result arrived since.
            expect(verdict.reason).toBe("tool_result");
            continue;
          }
          const request = (replay: Message[]) =>
            format === "plain"
              ? plainPrompt({ context: { block: block.staticBlock }, messages: replay })
              : (replayRequest(format, replay, block) as Record<string, unknown>);
          expect(requestBreak(request(before), request(now)), format).toBeNull();
        }
      }),
      { numRuns: 300 },
    );
  });

  it("is caught when a message in the middle changes (the oracle sees what the mark cannot)", () => {
    const history = build([
      { t: "note", role: "USER", native: false },
      { t: "note", role: "ASSISTANT", native: false },
    ]);
    const changed = [{ ...history[0]!, content: "edited" }, history[1]!];
    for (const format of REPLAY_FORMATS) {
      const a = replayRequest(format, history, block) as Record<string, unknown>;
      const b = replayRequest(format, changed, block) as Record<string, unknown>;
      expect(requestBreak(a, b), format).not.toBeNull();
    }
  });
});
