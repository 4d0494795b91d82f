/**
 * Folds that take more than one summarizer call. A provider fold's range (docs/summarizers.md,
 * "Provider folds"): no call saw the whole range, so no block stands for it, and the summary says
 * why (`chunked`), chained or in parallel. In parallel, each part is asked for the required units
 * its messages hold (docs/summarizers.md, "What a fold of several chunks costs").
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { summarizeChunks } from "../../core/services/compaction/summary-chunks.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { makeMessage } from "../support/fixtures.js";

const fold = Array.from({ length: 6 }, (_, i) => makeMessage("p", { role: i % 2 === 0 ? "USER" : "ASSISTANT", content: `${"crate ".repeat(1700)}${i}` }));
const plan = { fold, providerFold: { system: "You move crates." } };
const native = { format: "anthropic" as const, content: [{ type: "compaction", content: "x" }] };

describe("a provider fold in several calls", () => {
  it.each([
    ["chained", 1],
    ["in parallel", 4],
  ])("%s: the readable summary alone, noted `chunked`, with no call's block", async (_, concurrency) => {
    const fake = createFakeSummarizer();
    fake.summarize = async (input) => ({ ok: true, summary: `folded ${input.messages.length}`, native });
    const run = await summarizeChunks(fake, 25_000, { ...DEFAULT_TUNABLES, summaryMaxTokens: 500, summarizerConcurrency: concurrency }, plan, null, []);
    if (!run.ok) throw new Error(run.error);
    expect(run.result.calls).toBeGreaterThan(1);
    expect(run.result.native).toBeUndefined();
    expect(run.result.nativeNote).toMatch(/^chunked: the fold took \d+ calls$/);
  });
});

describe("a fold summarized in parallel", () => {
  it("gives each part's call the required units its messages hold, so the merge still has them", async () => {
    const parts = Array.from({ length: 4 }, (_, i) =>
      makeMessage("p", { role: "USER", content: `${"crate ".repeat(1700)}${i === 2 ? "Never stack crates above 3 m. " : ""}Dock ${i}` }),
    );
    const asked: Array<{ first: string; mustKeep: string[] | undefined }> = [];
    const fake = createFakeSummarizer();
    fake.summarize = async (input) => {
      asked.push({ first: input.messages[0]!.content.slice(-40), mustKeep: input.mustKeep });
      return { ok: true, summary: `folded ${input.messages.length}` };
    };
    const required = ["Never stack crates above 3 m", "Harbour 9"];
    const run = await summarizeChunks(fake, 25_000, { ...DEFAULT_TUNABLES, summaryMaxTokens: 500, summarizerConcurrency: 4 }, { fold: parts }, null, required);
    if (!run.ok) throw new Error(run.error);
    const partCalls = asked.slice(0, -1);
    expect(partCalls.length).toBeGreaterThan(1);
    // The part holding the rule is asked to keep it; the others, and "Harbour 9" nowhere in the fold, are not.
    expect(partCalls.filter((c) => c.mustKeep !== undefined).map((c) => c.mustKeep)).toEqual([["Never stack crates above 3 m"]]);
    expect(asked.at(-1)!.mustKeep).toEqual(required);
  });
});
