/**
 * Edits ride on folds (docs/turns.md, "Append-only between folds"), against DynamoDB Local: in
 * background mode with no worker (the queued fold never lands), a tool loop grows past
 * clearThreshold, the SOFT and the HARD thresholds and on to EMERGENCY. Below EMERGENCY every turn
 * keeps the prefix (clearing runs but waits for the next fold); the first turn whose prompt would
 * pass the emergency threshold trims and says so, `prefix: { kept: false, reason: "trim" }`.
 * Each `prefix` answer is held to the oracle of tools/prefix-check.ts on the turn's `request`.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import type { Store } from "../../core/ports/store.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn, type TurnResult } from "../../core/services/turn.js";
import { requestBreak } from "../../tools/prefix-check.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

const TENANT = "emerg";
const WINDOW = 16_000;
let store: Store;

beforeAll(async () => {
  ({ store } = await freshTable("emerg"));
});

/** Distinct text per result, about `kb` KB. */
const resultText = (i: number, kb: number) => `module${i}.ts marker-${i}\n${`export const value${i} = ${i}; // line of the module\n`.repeat((kb * 1024) / 52)}`;

interface Seen {
  step: number;
  ratio: number;
  answer: TurnResult;
  broke: string | null;
}

describe("edits outside a fold", { timeout: 180_000 }, () => {
  it("take effect only when the prompt would pass the emergency threshold, and the answer says trim", async () => {
    const { deps } = testContainer({ store });
    const key = { tenantId: TENANT, processId: "emerg-1" };
    await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
    await appendMessage(deps, key, { role: "USER", content: "Read every module and list the unused exports." });
    const seen: Seen[] = [];
    let previous: Record<string, unknown> | undefined;
    // ~1.5k tokens per step: from ~0.6 of the window on, clearing rounds run; EMERGENCY by step ~11.
    for (let step = 0; step < 16; step++) {
      await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: `c${step}`, name: "read_file", arguments: `{"path":"module${step}.ts"}` }] });
      const answer = await runTurn(deps, key, {
        model: { contextWindow: WINDOW },
        format: "anthropic",
        message: { role: "TOOL", content: resultText(step, 6), toolCallId: `c${step}` },
      });
      const request = answer.request as unknown as Record<string, unknown>;
      seen.push({ step, ratio: answer.compaction.tokensBefore / WINDOW, answer, broke: previous ? requestBreak(previous, request) : null });
      previous = request;
    }

    // No fold lands (no worker): every edit below is one made outside a fold.
    expect(seen.every((s) => !s.answer.compaction.compacted)).toBe(true);
    for (const s of seen.slice(1)) {
      // The answer's claim agrees with the two requests themselves.
      expect({ step: s.step, kept: s.answer.prefix.kept }).toEqual({ step: s.step, kept: s.broke === null });
      if (s.ratio < DEFAULT_TUNABLES.emergencyThreshold) {
        // Below EMERGENCY: nothing trimmed, nothing cleared shows, the prefix is kept.
        expect({ step: s.step, trimmed: s.answer.compaction.trimmed, prefix: s.answer.prefix }).toEqual({ step: s.step, trimmed: undefined, prefix: { kept: true } });
        expect(s.answer.messages.some((m) => m.cleared !== undefined)).toBe(false);
      } else if (!s.answer.prefix.kept) {
        // At EMERGENCY a changed prefix is a trim, and the answer names it.
        expect({ step: s.step, reason: s.answer.prefix.reason }).toEqual({ step: s.step, reason: "trim" });
        expect(s.answer.compaction.trimmed?.messages).toBeGreaterThan(0);
      }
    }
    // The run reached each stage it claims to cover: a clearing round that waited, turns past
    // HARD that kept the prefix, and a trim at EMERGENCY.
    const belowEmergency = seen.slice(1).filter((s) => s.ratio < DEFAULT_TUNABLES.emergencyThreshold);
    expect(belowEmergency.some((s) => (s.answer.compaction.clearedMessages ?? 0) > 0)).toBe(true);
    expect(belowEmergency.some((s) => s.ratio >= DEFAULT_TUNABLES.hardThreshold && s.answer.prefix.kept)).toBe(true);
    const firstOver = seen.find((s) => s.ratio >= DEFAULT_TUNABLES.emergencyThreshold);
    expect(firstOver?.answer.prefix).toEqual({ kept: false, reason: "trim" });
  });
});
