/**
 * The tunables resolver (core/services/tunables.ts): defaults < env < tenant < project, a cache
 * per container, and validation on save. A hand-written settings store records its reads.
 */
import { describe, expect, it } from "vitest";
import { AppError } from "../../core/domain/errors.js";
import { DEFAULT_TUNABLES, mergeTunables } from "../../core/domain/tunables.js";
import type { SettingsStore } from "../../core/ports/store.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { createTunablesResolver } from "../../core/services/tunables.js";
import { createMemoryLog } from "../support/memory-log.js";

/** The settings port (two methods), keeping items in a map and counting reads. */
function settingsStore(initial: Record<string, Record<string, unknown>> = {}) {
  const items = new Map(Object.entries(initial));
  const reads: string[] = [];
  const slot = (tenantId: string, projectId?: string) => `${tenantId}/${projectId ?? ""}`;
  const store: SettingsStore = {
    async getSettings(tenantId, projectId) {
      reads.push(slot(tenantId, projectId));
      return items.get(slot(tenantId, projectId)) ?? null;
    },
    async putSettings(tenantId, projectId, settings) {
      items.set(slot(tenantId, projectId), settings);
    },
  };
  return { store, items, reads };
}

const AT = "2026-01-01T00:00:00.000Z";

describe("createTunablesResolver", () => {
  it("layers base < tenant < project", async () => {
    const { store } = settingsStore({ "t/": { keepRecent: 20, hardAnchor: 7 }, "t/p": { keepRecent: 6 } });
    const base = mergeTunables(DEFAULT_TUNABLES, { softAnchor: 12 });
    const resolver = createTunablesResolver({ store, base });
    expect(await resolver.forProcess("t", "p")).toEqual({ ...base, keepRecent: 6, hardAnchor: 7 });
    expect(await resolver.forProcess("t")).toEqual({ ...base, keepRecent: 20, hardAnchor: 7 });
    expect(await resolver.forProcess("other", "p")).toEqual(base);
  });

  it("reads each settings item once per TTL, and again after it", async () => {
    let now = 0;
    const { store, reads } = settingsStore({ "t/": { keepRecent: 20 } });
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES, ttlMs: 1_000, now: () => now });
    await resolver.forProcess("t", "p");
    await resolver.forProcess("t", "p");
    now = 999;
    await resolver.forProcess("t", "p");
    expect(reads).toEqual(["t/", "t/p"]);
    now = 1_000;
    await resolver.forProcess("t", "p");
    expect(reads).toEqual(["t/", "t/p", "t/", "t/p"]);
  });

  it("sees a saved override on the next resolution, cache or not", async () => {
    const { store, items } = settingsStore();
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES });
    expect((await resolver.forProcess("t", "p")).keepRecent).toBe(10);
    expect(await resolver.save("t", "p", { keepRecent: 3 }, AT)).toMatchObject({ keepRecent: 3 });
    expect((await resolver.forProcess("t", "p")).keepRecent).toBe(3);
    await resolver.save("t", undefined, { hardAnchor: 2 }, AT);
    expect(await resolver.forProcess("t", "p")).toMatchObject({ keepRecent: 3, hardAnchor: 2 });
    expect(items.get("t/p")).toEqual({ keepRecent: 3 });
    expect(await resolver.read("t", "p")).toEqual({ keepRecent: 3 });
  });

  it("refuses an override that breaks the merged threshold order, storing nothing", async () => {
    const { store, items } = settingsStore({ "t/": { hardThreshold: 0.6 } });
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES });
    const attempt = resolver.save("t", "p", { softThreshold: 0.7 }, AT);
    await expect(attempt).rejects.toBeInstanceOf(AppError);
    await expect(attempt).rejects.toMatchObject({ kind: "input", code: "tunables.invalid", message: expect.stringContaining("hardThreshold") });
    expect(items.has("t/p")).toBe(false);
    expect((await resolver.forProcess("t", "p")).softThreshold).toBe(0.4);
  });

  it("ignores a stored item that no longer validates instead of failing every turn", async () => {
    const { store } = settingsStore({ "t/": { keepRecent: -5 }, "t/p": { hardAnchor: 2 } });
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES });
    expect(await resolver.forProcess("t", "p")).toEqual({ ...DEFAULT_TUNABLES, hardAnchor: 2 });
  });

  it("keeps resolving when a later tenant override conflicts with an older project override", async () => {
    // The project override was valid when saved (soft 0.6 < hard 0.85); the tenant then moved hard
    // below it. Failing here would fail every turn of the project with a 400 it cannot fix.
    const { store } = settingsStore({ "t/p": { softThreshold: 0.6, keepRecent: 4 } });
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES, ttlMs: 0 });
    await resolver.save("t", undefined, { hardThreshold: 0.5, softThreshold: 0.3 }, AT);
    const resolved = await resolver.forProcess("t", "p");
    expect(resolved.softThreshold < resolved.hardThreshold && resolved.hardThreshold < resolved.emergencyThreshold).toBe(true);
    // The project's thresholds no longer fit and are set aside; its other fields still apply.
    expect(resolved).toMatchObject({ hardThreshold: 0.5, softThreshold: 0.3, keepRecent: 4 });
    expect((await resolver.forProcess("t")).hardThreshold).toBe(0.5);
  });

  it("sets aside a stored project clearThreshold or prepareThreshold that a later tenant softThreshold passed, keeping its other fields", async () => {
    // Stored before the clearing and preparing rungs were checked against softThreshold, or before
    // the tenant moved softThreshold above them.
    const { store } = settingsStore({ "t/p": { clearThreshold: 0.45, prepareThreshold: 0.5, keepRecent: 4 }, "t/": { softThreshold: 0.55 } });
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES, ttlMs: 0 });
    expect(await resolver.forProcess("t", "p")).toMatchObject({ softThreshold: 0.55, clearThreshold: 0.6, prepareThreshold: 0.7, keepRecent: 4 });
  });

  it("keeps resolving when the deployment's env moved the thresholds under a stored tenant override", async () => {
    const { store } = settingsStore({ "t/": { softThreshold: 0.6, hardAnchor: 3 } });
    const base = mergeTunables(DEFAULT_TUNABLES, { softThreshold: 0.3, hardThreshold: 0.5 });
    const resolver = createTunablesResolver({ store, base });
    expect(await resolver.forProcess("t", "p")).toEqual({ ...base, hardAnchor: 3 });
  });

  it("reports each field it leaves out, a stored item's when read and a conflict's once per TTL", async () => {
    const { store } = settingsStore({ "t/": { summaryMaxTokens: 1_000, renamedLongAgo: 3 }, "t/p": { hardThreshold: 0.35 } });
    const log = createMemoryLog();
    const metrics = createRecordingMetrics();
    let now = 0;
    const resolver = createTunablesResolver({ store, base: DEFAULT_TUNABLES, ttlMs: 1_000, now: () => now, log, metrics });
    expect(await resolver.forProcess("t", "p")).toMatchObject({ summaryMaxTokens: 1_000, hardThreshold: 0.85 });
    await resolver.forProcess("t", "p");
    expect(log.entries.map((e) => e.fields)).toEqual([
      { tenantId: "t", layer: "tenant", field: "renamedLongAgo", reason: "unknown tunable" },
      { tenantId: "t", projectId: "p", layer: "project", field: "hardThreshold", reason: expect.stringContaining("softThreshold < hardThreshold") },
    ]);
    expect(metrics.invalidSettings).toEqual([
      { layer: "tenant", field: "renamedLongAgo" },
      { layer: "project", field: "hardThreshold" },
    ]);
    now += 1_000;
    await resolver.forProcess("t", "p");
    expect(metrics.invalidSettings).toHaveLength(4);
    expect(await resolver.read("t", undefined)).toEqual({ summaryMaxTokens: 1_000 });
  });
});
