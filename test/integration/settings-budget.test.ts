/**
 * The summary budget settings against DynamoDB Local (docs/configuration.md, "Tunables" and
 * "Summary budget"): `summaryMaxTokens` is a maximum however large the window, settings
 * stored under the old meaning read as a maximum, a range fold's budget holds the summary it
 * chains, and a stored setting or layer that cannot be used is logged and counted.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../core/ports/store.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

const TENANT = "budget";
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("budget"));
});

function harness() {
  // Each reading of the clock is a second later, so messages have distinct times a range can name.
  let now = Date.parse("2026-01-01T10:00:00.000Z");
  return testContainer({ store, clock: { now: () => new Date((now += 1_000)) } });
}

type Deps = ReturnType<typeof harness>["deps"];

/** Appends `n` messages; returns their createdAt. */
async function append(deps: Deps, key: { tenantId: string; processId: string }, n: number, prefix: string): Promise<string[]> {
  const at: string[] = [];
  for (let i = 0; i < n; i++) {
    const role = i % 2 === 0 ? "USER" : "ASSISTANT";
    at.push((await appendMessage(deps, key, { role, content: `${prefix} ${i}: crate ${i} goes to bay ${i % 9}.` })).message.createdAt);
  }
  return at;
}

/** A process of `projectId` with `n` messages. */
async function seeded(deps: Deps, projectId: string, n: number) {
  const key = { tenantId: TENANT, processId: `p-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId });
  await append(deps, key, n, "step");
  return key;
}

describe("summaryMaxTokens is a maximum", () => {
  it("caps a fold's summary budget at a 128k window, for a setting stored before it meant a maximum", async () => {
    const { deps, fake } = harness();
    // An item as stored before summaryMinTokens existed: written straight to the table.
    await store.putSettings(TENANT, "small", { summaryMaxTokens: 120, summaryWindowShare: 0.2 }, "2026-01-01T00:00:00.000Z");
    const key = await seeded(deps, "small", 30);
    fake.script.push({ ok: true, summary: "Crates 0 to 29 go to bays 0 to 8.", usage: { inputTokens: 10, outputTokens: 12 } });
    const out = await compactManually(deps, key, { model: { contextWindow: 128_000 }, force: "HARD" });
    expect(out.result, JSON.stringify(out.result)).toMatchObject({ compacted: true });
    expect(fake.calls.map((c) => c.maxSummaryTokens)).toEqual([120]);
    // The old item reads without failing, and the effective minimum follows the maximum down.
    expect(await deps.tunables.forProcess(TENANT, "small")).toMatchObject({ summaryMinTokens: 120, summaryMaxTokens: 120 });
    expect(await deps.tunables.read(TENANT, "small")).toEqual({ summaryMaxTokens: 120, summaryWindowShare: 0.2 });
  });
});

describe("a range fold", () => {
  it("gets a budget that holds the prior summary it chains, up to summaryMaxTokens", async () => {
    const { deps, fake } = harness();
    const key = await seeded(deps, "ranges", 40);
    // A first fold at 32k writes a summary grown to its window's budget (4,000 tokens).
    fake.script.push({ ok: true, summary: "crates and bays. ".repeat(700), usage: { inputTokens: 10, outputTokens: 2_900 } });
    expect((await compactManually(deps, key, { model: { contextWindow: 32_000 }, force: "HARD" })).result.compacted).toBe(true);
    expect(fake.calls.at(-1)!.maxSummaryTokens).toBe(4_000);
    const late = await append(deps, key, 20, "late step");
    const range = { from: late[0]!, to: late[10]!, topicLabel: "late crates" };
    const out = await compactRange(deps, key, range);
    expect(out.compactedMessages).toBeGreaterThan(0);
    const call = fake.calls.at(-1)!;
    expect(call.priorSummary!.length).toBeGreaterThan(10_000);
    // The prior summary's ~3,000 tokens, not the fixed 400.
    expect(call.maxSummaryTokens).toBeGreaterThanOrEqual(Math.ceil(call.priorSummary!.length / 4));
    expect(call.maxSummaryTokens).toBeLessThanOrEqual(4_000);
  });
});

describe("stored settings that cannot be used", () => {
  it("keeps a stored item's valid fields, and logs and counts the field that no longer validates", async () => {
    const { deps, metrics, log } = harness();
    await store.putSettings(TENANT, "stale", { keepRecent: 7, maxSourceChars: 50 }, "2026-01-01T00:00:00.000Z");
    expect(await deps.tunables.forProcess(TENANT, "stale")).toMatchObject({ keepRecent: 7, maxSourceChars: 60_000 });
    expect(log.entries).toContainEqual({
      level: "WARN",
      message: "stored setting ignored",
      fields: { tenantId: TENANT, projectId: "stale", layer: "project", field: "maxSourceChars", reason: "must be >= 1000" },
    });
    expect(metrics.invalidSettings).toEqual([{ layer: "project", field: "maxSourceChars" }]);
  });

  it("logs and counts a layer whose thresholds no longer fit the layers below, once per read of the item", async () => {
    const { deps, metrics, log } = harness();
    const tenant = "budget-layers";
    await store.putSettings(tenant, undefined, { softThreshold: 0.5, hardThreshold: 0.6, emergencyThreshold: 0.7 }, "2026-01-01T00:00:00.000Z");
    // Saved when the tenant's thresholds were the defaults; 0.65 is now past the tenant's HARD.
    await store.putSettings(tenant, "late", { softThreshold: 0.65, keepRecent: 5 }, "2026-01-01T00:00:00.000Z");
    const resolved = await deps.tunables.forProcess(tenant, "late");
    expect(resolved).toMatchObject({ softThreshold: 0.5, hardThreshold: 0.6, keepRecent: 5 });
    await deps.tunables.forProcess(tenant, "late");
    const dropped = log.entries.filter((e) => e.message === "stored setting ignored");
    expect(dropped).toEqual([
      {
        level: "WARN",
        message: "stored setting ignored",
        fields: { tenantId: tenant, projectId: "late", layer: "project", field: "softThreshold", reason: expect.stringContaining("softThreshold < hardThreshold") },
      },
    ]);
    expect(metrics.invalidSettings).toEqual([{ layer: "project", field: "softThreshold" }]);
  });
});
