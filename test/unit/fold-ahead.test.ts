/** What a prepare job summarizes for a process that grows fast (core/services/compaction/fold-ahead.ts). */
import { describe, expect, it } from "vitest";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import type { ActiveView } from "../../core/ports/store.js";
import { foldReadyInTime } from "../../core/services/compaction/fold-ahead.js";
import { makeMessage } from "../support/fixtures.js";

const NOW = Date.parse("2026-12-01T10:00:00.000Z");
const clock = { now: () => new Date(NOW) };
const t = { ...DEFAULT_TUNABLES, maxSourceChars: 20_000 };

/** 40 messages of 4,000 chars (1,000 tokens), one every `everyMs`: about 8 summarizer calls' worth. */
function process(everyMs: number) {
  const messages = Array.from({ length: 40 }, (_, i) =>
    makeMessage("p", { role: i % 2 ? "ASSISTANT" : "USER", content: "x".repeat(4_000), tokens: 1_000, createdAt: new Date(NOW - (40 - i) * everyMs).toISOString() }),
  );
  return { view: { messages, summaries: [], folds: [] } as unknown as ActiveView, messages };
}

describe("foldReadyInTime", () => {
  it("a process that would outgrow two prepares before the emergency threshold gets what one summarizer call holds, oldest first", () => {
    const { view, messages } = process(1_000);
    const fold = foldReadyInTime({ clock }, view, t, messages.slice(0, 30), { tokens: 30_000, scale: 1, contextWindow: 50_000 });
    expect(fold.length).toBeGreaterThan(0);
    expect(fold.length).toBeLessThan(30);
    expect(fold).toEqual(messages.slice(0, fold.length));
  });
  it("a slow process gets the whole fold", () => {
    const { view, messages } = process(60_000);
    expect(foldReadyInTime({ clock }, view, t, messages.slice(0, 30), { tokens: 30_000, scale: 1, contextWindow: 50_000 })).toHaveLength(30);
  });
});
