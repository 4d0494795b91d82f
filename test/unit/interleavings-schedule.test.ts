/**
 * The interleaving checker's pure parts (tools/interleavings/): the replayable schedule form, the
 * default policy and what counts as a preemption, and the systematic search's frontier (every
 * schedule proposed once, fewest preemptions first).
 */
import { describe, expect, it } from "vitest";
import { createSystematicSearch, type Trace } from "../../tools/interleavings/explore.js";
import { defaultChoice, formatSchedule, parseSchedule, preempts, scheduleOf } from "../../tools/interleavings/schedule.js";
import type { Choice, Step } from "../../tools/interleavings/scheduler.js";

const step = (actor: string, previous: string | null, pending = ["a", "b"], enabled = pending): Step => ({ actor, previous, pending, enabled, call: "GetCommand" });

describe("schedules", () => {
  it("round-trip through their run-length form", () => {
    const actors = ["walker", "walker", "walker", "revert", "walker"];
    expect(formatSchedule(actors)).toBe("walker*3,revert,walker");
    expect(parseSchedule("walker*3,revert,walker")).toEqual(actors);
    expect(parseSchedule("walker, walker,walker ,revert,walker")).toEqual(actors);
    expect(parseSchedule("")).toEqual([]);
  });

  it("refuse a malformed step", () => {
    expect(() => parseSchedule("walker*0")).toThrow(/bad count/);
    expect(() => parseSchedule("walker*x")).toThrow(/bad schedule step/);
    expect(() => parseSchedule("*3")).toThrow(/bad schedule step/);
  });

  it("end after their last step the default policy would not take", () => {
    // a runs while it holds a call; b only when a is done (its steps there are the default).
    const steps = [step("a", null), step("b", "a"), step("b", "b"), step("a", "b", ["a"]), step("a", "a", ["a"])];
    expect(scheduleOf(steps)).toEqual(["a", "b"]);
    expect(scheduleOf([step("a", null), step("a", "a"), step("b", "a", ["b"])])).toEqual([]);
  });

  it("count a preemption only when the previous actor could have gone on", () => {
    expect(preempts({ previous: "a", pending: ["a", "b"], enabled: ["a", "b"] }, "b")).toBe(true);
    expect(preempts({ previous: "a", pending: ["b"], enabled: ["a", "b"] }, "b")).toBe(false); // a sleeps
    expect(preempts({ previous: null, pending: ["a", "b"], enabled: ["a", "b"] }, "b")).toBe(false);
    expect(defaultChoice({ previous: "a", pending: ["b"], enabled: ["a", "b"] })).toBe("b");
    expect(defaultChoice({ previous: "a", pending: [], enabled: ["a", "b"] })).toBe("a");
  });
});

describe("the systematic search", () => {
  /** Two actors of two steps each, a and b: every interleaving of them, as a deterministic system would run it. */
  function simulate(prefix: readonly string[]): Trace {
    const left = { a: 2, b: 2 } as Record<string, number>;
    const trace: Step[] = [];
    let previous: string | null = null;
    for (let i = 0; left.a! + left.b! > 0; i++) {
      const live = ["a", "b"].filter((x) => left[x]! > 0);
      const choice: Choice = { previous, pending: live, enabled: live };
      const actor: string = i < prefix.length ? prefix[i]! : defaultChoice(choice);
      trace.push({ ...choice, actor, call: "GetCommand" });
      left[actor]!--;
      previous = actor;
    }
    return trace;
  }

  it("proposes every schedule once, fewest preemptions first", () => {
    const search = createSystematicSearch(7);
    const seen: string[] = [];
    const preemptions: number[] = [];
    for (let next = search.take(); next; next = search.take()) {
      const trace = simulate(next.prefix);
      seen.push(trace.map((t) => t.actor).join(""));
      preemptions.push(next.preemptions);
      search.propose(next.prefix, trace);
    }
    // The 6 interleavings of aa and bb, each once.
    expect([...seen].sort()).toEqual(["aabb", "abab", "abba", "baab", "baba", "bbaa"]);
    expect(preemptions).toEqual([...preemptions].sort((x, y) => x - y));
    expect(search.lowestOpen()).toBeNull();
  });
});
