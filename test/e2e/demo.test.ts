/**
 * The demo's output (scripts/demo-core.ts, `npm run demo`): one line per compaction and a progress
 * line every few turns, never a line for each turn that did not compact. Runs the demo's engine on
 * a small built-in conversation against the local runner with a small window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateLocomoSample } from "../../bench/support/generated-conversation.js";
import { parseConversation } from "../../bench/support/locomo.js";
import { createMemoryClient } from "../../client/index.js";
import { conversationSteps, runDemo, withEngineHabits, type DemoOutcome } from "../../scripts/demo-core.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
beforeAll(async () => {
  ctx = await startTestService();
});
afterAll(async () => ctx?.service.stop());

const sample = generateLocomoSample({ seed: 7, sampleId: "demo", speakers: ["Ada", "Ben"], start: new Date(Date.UTC(2024, 2, 1, 10, 0)), sessions: 8, turnsPerSession: [10, 12] });
const steps = withEngineHabits(conversationSteps(parseConversation(sample.sample_id, { ...sample.conversation, qa: sample.qa })));

const COMPACTION = /^turn +\d+ {2}(SOFT|HARD|EMERGENCY) +folded +\d+ messages +tokens +\d+ -> +\d+ +active messages now +\d+$/;
const PROGRESS = /^turn +(\d+)\/(\d+) {2}(\d+) compactions? so far, \d+ active messages?, largest prompt ~\d+ tokens(?:; not compacted since the last line: (.+))?$/;

describe("npm run demo's output", () => {
  let lines: string[];
  let outcome: DemoOutcome;

  beforeAll(async () => {
    lines = [];
    outcome = await runDemo({
      memory: createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A }),
      steps,
      window: 1000,
      processId: "demo-output",
      source: "a test conversation",
      summarizer: "offline (offline-extractive-v1)",
      serviceUrl: ctx.service.url,
      progressEvery: 10,
      write: (text) => lines.push(...text.split("\n")),
    });
  }, 120_000);

  it("compacts on a small window, so there is something to print", () => {
    expect(steps.length).toBeGreaterThan(40);
    expect(outcome.turns).toBe(steps.length);
    expect(Object.values(outcome.compactions).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
  });

  it("prints a header, then only compaction and progress lines, then the summary", () => {
    expect(lines.slice(0, 6)).toEqual([
      `Vancetope Memory demo at ${ctx.service.url}`,
      `  script:     ${steps.length} turns from a test conversation`,
      "  model:      window 1000 tokens (SOFT at 40%, HARD at 85%, EMERGENCY at 95%)",
      "  summarizer: offline (offline-extractive-v1)",
      "  process:    demo-output",
      "",
    ]);
    const done = lines.findIndex((l) => l.startsWith("Done: "));
    expect(lines[done - 1]).toBe("");
    const body = lines.slice(6, done - 1);
    expect(body.filter((l) => !COMPACTION.test(l) && !PROGRESS.test(l))).toEqual([]);
    expect(lines.join("\n")).not.toContain("not compacted:");
  });

  it("prints exactly one line per compaction", () => {
    const compactionLines = lines.filter((l) => COMPACTION.test(l));
    const total = Object.values(outcome.compactions).reduce((a, b) => a + b, 0);
    expect(compactionLines).toHaveLength(total);
    for (const [mode, k] of Object.entries(outcome.compactions)) {
      expect(compactionLines.filter((l) => l.includes(`  ${mode} `))).toHaveLength(k);
    }
  });

  it("prints a progress line every 10 turns and after the last, counting the turns that did not compact", () => {
    const progress = lines.map((l) => PROGRESS.exec(l)).filter((m): m is RegExpExecArray => m !== null);
    const expectedAt = [...Array.from({ length: Math.floor(steps.length / 10) }, (_, i) => (i + 1) * 10), ...(steps.length % 10 ? [steps.length] : [])];
    expect(progress.map((m) => Number(m[1]))).toEqual(expectedAt);
    expect(new Set(progress.map((m) => Number(m[2])))).toEqual(new Set([steps.length]));
    // Every turn that did not compact is counted in exactly one progress line.
    let skipped = 0;
    for (const m of progress) for (const part of (m[4] ?? "").split(", ").filter(Boolean)) skipped += Number(part.split(" ")[1]);
    const compactions = Object.values(outcome.compactions).reduce((a, b) => a + b, 0);
    expect(skipped).toBe(steps.length - compactions);
    expect(Object.values(outcome.notCompacted).reduce((a, b) => a + b, 0)).toBe(skipped);
    // The last progress line reports every compaction.
    expect(Number(progress.at(-1)![3])).toBe(compactions);
  });
});
