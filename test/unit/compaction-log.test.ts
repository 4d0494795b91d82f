import { describe, expect, it } from "vitest";
import { compactionLogLine } from "../../core/domain/compaction-log.js";

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
