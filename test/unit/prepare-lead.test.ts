/** When a background fold is queued (core/domain/prepare-lead.ts and the HARD rung of core/domain/mode-policy.ts). */
import { describe, expect, it } from "vitest";
import { wantedFold } from "../../core/domain/fold-size.js";
import { DEFAULT_PREPARE_MS, growthPerMs, observedPrepareMs, PREPARE_MARGIN, prepareLead } from "../../core/domain/prepare-lead.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";

const at = (ms: number) => new Date(ms).toISOString();
const NOW = Date.parse("2026-12-01T10:00:00.000Z");

describe("growthPerMs", () => {
  it("counts the tokens appended after the oldest message of the window, over the time since it", () => {
    const messages = [
      { createdAt: at(NOW - 120_000), tokens: 5_000 }, // before the window: not counted
      { createdAt: at(NOW - 4_000), tokens: 999 }, // the window's first: its time only
      { createdAt: at(NOW - 2_000), tokens: 100 },
      { createdAt: at(NOW - 1_000), tokens: 300 },
    ];
    expect(growthPerMs(messages, NOW)).toBeCloseTo(400 / 4_000);
  });
  it("is 0 with fewer than two messages in the window", () => {
    expect(growthPerMs([], NOW)).toBe(0);
    expect(growthPerMs([{ createdAt: at(NOW - 1_000), tokens: 100 }], NOW)).toBe(0);
    expect(growthPerMs([{ createdAt: at(NOW - 90_000), tokens: 100 }, { createdAt: at(NOW - 80_000), tokens: 100 }], NOW)).toBe(0);
  });
});

describe("observedPrepareMs", () => {
  it("reads queued-to-prepared from a prepared summary, else the summarizer's wall time, else the default", () => {
    expect(observedPrepareMs({ metadata: { queuedAt: at(NOW - 5_300), preparedAt: at(NOW), summarizerMs: 5_000 } as never })).toBe(5_300);
    expect(observedPrepareMs({ metadata: { summarizerMs: 1_200 } as never })).toBe(1_200);
    expect(observedPrepareMs(null)).toBe(DEFAULT_PREPARE_MS);
  });
});

describe("the HARD rung with a lead", () => {
  const t = { ...DEFAULT_TUNABLES, softThreshold: 0.4, prepareThreshold: 0.7, hardThreshold: 0.85, emergencyThreshold: 0.95 };
  it("queues HARD once ratio + lead reaches hardThreshold, never later than prepareThreshold nor before softThreshold", () => {
    expect(wantedFold(0.59, t, 0.25)).toBe("SOFT");
    expect(wantedFold(0.6, t, 0.25)).toBe("HARD");
    expect(wantedFold(0.7, t, 0.01)).toBe("HARD"); // a slow process: prepareThreshold is the latest point
    expect(wantedFold(0.39, t, 0.9)).toBeNull(); // a fast one: not before softThreshold
    expect(wantedFold(0.4, t, 0.9)).toBe("HARD");
  });
  it("prepares nothing ahead when prepareThreshold is at or above hardThreshold, whatever the lead", () => {
    expect(wantedFold(0.5, { ...t, prepareThreshold: 0.9 }, 0.5)).toBe("SOFT");
  });
  it("the lead is the growth over the prepare latency with its margin, in the caller's units", () => {
    // 0.1 of ours per ms, 5 s, twice the caller's tokens per ours, 10k window.
    expect(prepareLead({ growthPerMs: 0.1, prepareMs: 5_000, scale: 2, contextWindow: 10_000 })).toBeCloseTo(0.1 * PREPARE_MARGIN);
    expect(prepareLead({ growthPerMs: 0.1, prepareMs: 5_000, scale: 1, contextWindow: 0 })).toBe(0);
  });
});
