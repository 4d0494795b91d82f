import { describe, expect, it } from "vitest";
import { committedLogLine, compactionLogLine } from "../../core/domain/compaction-log.js";
import type { Memory } from "../../core/domain/model.js";

describe("compactionLogLine", () => {
  it("puts the engine first and names the turn, how and mode, messages and characters", () => {
    expect(compactionLogLine({ engine: "vance", turn: "msg_1", how: "inline", mode: "SOFT", messages: 12, chars: 640 })).toBe(
      "vance.turn id='msg_1' compaction (inline SOFT) ok: 12 msgs -> 640 chars",
    );
  });

  it("names the default engine when the process names none or an empty one", () => {
    for (const engine of [undefined, ""]) {
      expect(compactionLogLine({ engine, turn: "mem_1", how: "worker", mode: "RANGE", messages: 3, chars: 90 })).toBe(
        "memory.turn id='mem_1' compaction (worker RANGE) ok: 3 msgs -> 90 chars",
      );
    }
  });
});

describe("committedLogLine", () => {
  const memory = (metadata: Partial<Memory["metadata"]>) => ({ id: "mem_1", content: "x".repeat(40), sourceRefs: ["a", "b"], metadata: { compactedMessages: 2, provider: "", model: "", ...metadata } });
  const turn = { engine: "vance", newestMessageId: "msg_9" };

  it.each([
    ["a fold committed inline in a turn", memory({ mode: "HARD", producedBy: "inline" }), {}, "vance.turn id='msg_9' compaction (inline HARD) ok: 2 msgs -> 40 chars"],
    ["a prepared fold an EMERGENCY turn committed", memory({ mode: "EMERGENCY", producedBy: "prepared" }), {}, "vance.turn id='msg_9' compaction (prepared EMERGENCY) ok: 2 msgs -> 40 chars"],
    ["the worker's commit", memory({ mode: "HARD", producedBy: "worker" }), {}, "vance.turn id='mem_1' compaction (worker HARD) ok: 2 msgs -> 40 chars"],
    ["a range fold", memory({ mode: "RANGE", producedBy: "inline" }), {}, "vance.turn id='mem_1' compaction (inline RANGE) ok: 2 msgs -> 40 chars"],
    ["a manual compaction", memory({ mode: "SOFT", producedBy: "inline" }), { manual: true }, "vance.turn id='mem_1' compaction (manual SOFT) ok: 2 msgs -> 40 chars"],
  ] as const)("names the turn's message only for a fold a turn committed: %s", (_name, m, o, line) => {
    expect(committedLogLine(m, { ...turn, ...o })).toBe(line);
  });
});
