/**
 * A provider fold's range that takes more than one summarizer call (docs/summarizers.md, "Provider
 * folds"): no call saw the whole range, so no block stands for it, and the summary says why
 * (`chunked`), chained or in parallel.
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
