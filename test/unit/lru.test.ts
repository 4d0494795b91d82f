import { describe, expect, it } from "vitest";
import { Lru } from "../../core/services/lru.js";

describe("Lru", () => {
  it("drops the least recently used entry past maxEntries, a read counting as a use", () => {
    let evicted = 0;
    const lru = new Lru<string, number>({ maxEntries: 2, onEvict: () => evicted++ });
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3);
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual([1, undefined, 3]);
    expect(evicted).toBe(1);
  });

  it("keeps the weights within maxWeight, dropping as many old entries as the new one needs", () => {
    const lru = new Lru<string, string>({ maxWeight: 10, weigh: (v) => v.length });
    lru.set("a", "xxxx");
    lru.set("b", "xxxx");
    expect(lru.weight).toBe(8);
    lru.set("c", "xxxxxxxx");
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual([undefined, undefined, "xxxxxxxx"]);
    expect(lru.weight).toBe(8);
  });

  it("keeps an entry of exactly maxWeight and not one a unit heavier, which leaves the others in place", () => {
    const lru = new Lru<string, string>({ maxWeight: 4, weigh: (v) => v.length });
    lru.set("fits", "xxxx");
    expect(lru.get("fits")).toBe("xxxx");
    lru.set("heavy", "xxxxx");
    expect(lru.get("heavy")).toBeUndefined();
    expect(lru.get("fits")).toBe("xxxx");
  });

  it("replaces a key's value with its new weight, and a delete frees its weight without an eviction", () => {
    let evicted = 0;
    const lru = new Lru<string, string>({ maxWeight: 10, weigh: (v) => v.length, onEvict: () => evicted++ });
    lru.set("a", "xx");
    lru.set("a", "xxxxx");
    expect(lru.weight).toBe(5);
    expect(lru.delete("a")).toBe(true);
    expect(lru.delete("a")).toBe(false);
    expect([lru.weight, evicted]).toEqual([0, 0]);
  });
});
