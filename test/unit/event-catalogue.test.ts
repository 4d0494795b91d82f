/** The event catalogue (core/domain/events.ts) is the one source of the events: docs and stacks agree with it. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { domainEvent, EVENT_SOURCES, EVENTS, type EventName } from "../../core/domain/events.js";
import { EVENT_SOURCES as STACK_SOURCES } from "../../stacks/handlers.js";

const api = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
const rows = [...api.matchAll(/^\| `(\w+)` \| `([\w.]+)` \| [^|]+ \| `\{ ([^}]*) \}` \|$/gm)].map((m) => ({
  detailType: m[1]!,
  source: m[2]!,
  fields: m[3]!.split(",").map((f) => f.trim()),
}));

describe("the event catalogue", () => {
  it("is documented in docs/api.md: every event once, with its source and exactly its detail fields", () => {
    expect(rows.map((r) => r.detailType).sort()).toEqual(Object.keys(EVENTS).sort());
    for (const row of rows) {
      const entry = EVENTS[row.detailType as EventName];
      expect(row.source, row.detailType).toBe(entry.source);
      expect(row.fields.sort(), row.detailType).toEqual(Object.keys(entry.detail.shape).sort());
    }
  });

  it("names each entry by its detail-type, and the stacks use its sources", () => {
    for (const [name, entry] of Object.entries(EVENTS)) expect(entry.detailType).toBe(name);
    expect(STACK_SOURCES).toBe(EVENT_SOURCES);
  });

  it("builds events whose detail its own schema accepts, and rejects a malformed incoming detail", () => {
    const event = domainEvent("MemoryReverted", { tenantId: "t", processId: "p", memoryId: "mem_1", restoredMessages: 3, activeSummaryId: null });
    expect(event).toMatchObject({ source: "vancetope.memory", detailType: "MemoryReverted" });
    expect(EVENTS.MemoryReverted.detail.safeParse(event.detail).success).toBe(true);
    expect(EVENTS.PlanCompleted.detail.safeParse({ tenantId: "t", processId: "p", planId: "x", topicLabel: "", completedAt: "now" }).success).toBe(false);
  });
});
