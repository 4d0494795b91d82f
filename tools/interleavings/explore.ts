/**
 * Which schedules to run. Systematic: every choice point of every run is a branch (stateless model
 * checking ordered by preemptions, as CHESS's preemption bounding): first the schedule without
 * preemptions, then every schedule with one, then with two, and so on until the budget is spent or
 * every schedule was run. A schedule is a prefix of choices followed by the default policy, which
 * never preempts, so its preemptions are those of its prefix; each run proposes the alternatives
 * at every step past its own prefix, so every schedule is proposed exactly once, by the run it
 * branches from. Random: each step picks an enabled actor with a seeded generator.
 */
import { mulberry32 } from "../chaos/rng.js";
import type { Chooser, Step } from "./scheduler.js";
import { defaultChoice, preempts } from "./schedule.js";

/** A chooser that follows `prefix`, then the default policy. */
export const followPrefix =
  (prefix: readonly string[]): Chooser =>
  (step, choice) =>
    step < prefix.length ? prefix[step]! : defaultChoice(choice);

/** A chooser that picks uniformly among the enabled actors. */
export function randomChooser(seed: number): Chooser {
  const next = mulberry32(seed);
  return (_step, choice) => choice.enabled[Math.floor(next() * choice.enabled.length)]!;
}

/** The choices a run made, as the search needs them. */
export type Trace = ReadonlyArray<Pick<Step, "actor" | "enabled" | "pending" | "previous">>;

interface Branch {
  /** The actors of the run it branches from (shared by all its branches). */
  actors: readonly string[];
  /** The step where it leaves that run, and the actor it takes there. */
  at: number;
  alt: string;
}

/**
 * The frontier of the systematic search: schedules to run, by how many preemptions they hold.
 * `take()` gives one of the lowest count still open (picked at random within it, so a search cut
 * short by its budget is a fair sample of that count); `propose()` adds a run's branches.
 */
export function createSystematicSearch(seed = 1) {
  const buckets: Branch[][] = [[{ actors: [], at: 0, alt: "" }]];
  const pick = mulberry32(seed);

  return {
    /** The fewest preemptions among the schedules not run yet (null: every schedule was run). */
    lowestOpen(): number | null {
      const i = buckets.findIndex((b) => b.length > 0);
      return i < 0 ? null : i;
    },
    /** A schedule to run (its prefix and preemptions), or null when none is open right now. */
    take(): { prefix: string[]; preemptions: number } | null {
      const preemptions = buckets.findIndex((b) => b.length > 0);
      if (preemptions < 0) return null;
      const bucket = buckets[preemptions]!;
      const [b] = bucket.splice(Math.floor(pick() * bucket.length), 1);
      const prefix = b!.alt === "" ? [] : [...b!.actors.slice(0, b!.at), b!.alt];
      return { prefix, preemptions };
    },
    /** Adds the schedules that branch from the run of `prefix`, at every step past it. */
    propose(prefix: readonly string[], trace: Trace) {
      const actors = trace.map((t) => t.actor);
      let used = 0;
      for (let j = 0; j < trace.length; j++) {
        const s = trace[j]!;
        if (j >= prefix.length) {
          for (const alt of s.enabled) {
            if (alt === s.actor) continue;
            const count = used + (preempts(s, alt) ? 1 : 0);
            while (buckets.length <= count) buckets.push([]);
            buckets[count]!.push({ actors, at: j, alt });
          }
        }
        if (preempts(s, s.actor)) used++;
      }
    },
  };
}
