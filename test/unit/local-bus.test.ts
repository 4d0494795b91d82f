/** The local runner's in-process bus (core/adapters/events/local-bus.ts): what it keeps and whom it tells who put an event. */
import { describe, expect, it } from "vitest";
import { createLocalBus, DEFAULT_MAX_RECORDED, type BusEvent } from "../../core/adapters/events/local-bus.js";

const event = (i: number) => ({ source: "vancetope.memory", detailType: "MemoryReverted", detail: { tenantId: "t", i } });

describe("createLocalBus", () => {
  it("keeps only the newest recorded events, oldest first", async () => {
    const bus = createLocalBus(undefined, { maxRecorded: 3 });
    for (let i = 0; i < 5; i++) await bus.publish(event(i));
    expect(bus.published().map((e) => e.detail.i)).toEqual([2, 3, 4]);
  });

  it("keeps 1,000 by default, however many are published", async () => {
    expect(DEFAULT_MAX_RECORDED).toBe(1_000);
    const bus = createLocalBus();
    for (let i = 0; i < 2_500; i++) await bus.publish(event(i));
    const kept = bus.published();
    expect(kept).toHaveLength(1_000);
    expect(kept[0]!.detail.i).toBe(1_500);
  });

  it("hands subscribers the account an outside delivery names, and none for the service's own events", async () => {
    const bus = createLocalBus();
    const seen: BusEvent[] = [];
    bus.subscribe({ source: "vancetope.memory", detailType: "MemoryReverted" }, async (e) => void seen.push(e));
    await bus.publish(event(1));
    await bus.deliver({ ...event(2), account: "key:tenant-b" });
    await bus.drain();
    expect(seen.map((e) => e.account)).toEqual([undefined, "key:tenant-b"]);
  });
});
