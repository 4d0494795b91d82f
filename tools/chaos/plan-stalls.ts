/**
 * The stalls of one engine's plan (tools/chaos/README.md, "Stalls"): which call of an operation is
 * held, where, for how long, and whether the engine goes on meanwhile; which offers' answers
 * arrive late, or again after their range summary was undone; and, after a flood, the slow
 * roll-forward that a revert (or a new fold) overtakes.
 * Every draw comes from the engine's own stall stream, apart from the stream the operations are
 * drawn from: with stalls off the plan of a seed is exactly the one from before stalls existed.
 */
import type { PlanCounters } from "./plan-draws.js";
import type { MessageDraft, OpSpec, StallMethod, StallPlan } from "./plan-model.js";
import type { Rng } from "./rng.js";

type Target = readonly [StallMethod | "summarizer", "before" | "inside" | "after"];

/** Where an operation of each kind may be held, with weights. Kinds not listed are never held. */
const TARGETS: Partial<Record<OpSpec["kind"], ReadonlyArray<readonly [Target, number]>>> = {
  append: [
    [["appendMessage", "before"], 1],
    [["appendMessage", "after"], 1],
  ],
  group: [
    [["appendMessage", "before"], 1],
    [["appendMessage", "after"], 1],
  ],
  turn: [
    [["activeView", "after"], 2],
    [["acquireLease", "before"], 1],
    [["acquireLease", "after"], 1],
    [["commitCompaction", "before"], 1],
    [["commitCompaction", "after"], 2],
    [["finishPendingArchive", "inside"], 2],
    [["releaseLease", "before"], 1],
    [["storeFold", "before"], 1],
    // The worker's commit job extends a prepared fold that covers too little (docs/compaction.md).
    [["extendFold", "before"], 1],
    [["extendFold", "after"], 1],
    [["summarizer", "after"], 2],
    [["appendMessage", "after"], 1],
    // A turn discards the folds it can no longer use (background execution).
    [["discardFold", "before"], 1],
    // The daily budget: the reservation before the summary, the count after it (the first tenant has a budget).
    [["reserveTokens", "after"], 1],
    [["addUsage", "before"], 1],
  ],
  compact: [
    [["activeView", "after"], 2],
    [["acquireLease", "before"], 1],
    [["acquireLease", "after"], 1],
    [["commitCompaction", "before"], 1],
    [["commitCompaction", "after"], 2],
    [["finishPendingArchive", "inside"], 2],
    [["releaseLease", "before"], 1],
    [["storeFold", "before"], 1],
    [["summarizer", "after"], 2],
    [["reserveTokens", "before"], 1],
    [["reserveTokens", "after"], 1],
    [["addUsage", "after"], 1],
  ],
  range: [
    [["activeView", "after"], 2],
    [["acquireLease", "after"], 1],
    [["commitCompaction", "before"], 1],
    [["commitCompaction", "after"], 1],
    [["finishPendingArchive", "inside"], 1],
    [["summarizer", "after"], 2],
  ],
  context: [
    [["activeView", "after"], 1],
    [["finishPendingArchive", "inside"], 2],
  ],
  // An export between its pages: what the engine does meanwhile is a 409 `export.changed` or not in the copy.
  copy: [[["listMessages", "after"], 1]],
  revert: [
    [["activeView", "after"], 1],
    [["acquireLease", "after"], 1],
    [["revertCompaction", "before"], 1],
    [["revertCompaction", "after"], 2],
    [["finishPendingArchive", "inside"], 2],
  ],
  // Not after the PATCH applied: the harness records what is pinned when a PATCH answers, which
  // must be the order in which they applied.
  pin: [
    [["activeView", "after"], 1],
    [["updateMessageTags", "before"], 2],
  ],
  // The appends of a finished plan, or the range compaction its answer's delivery runs.
  plan: [
    [["appendMessage", "before"], 1],
    [["acquireLease", "after"], 1],
    [["commitCompaction", "after"], 1],
    [["finishPendingArchive", "inside"], 1],
    [["summarizer", "after"], 1],
  ],
};

/**
 * Longest a detached stall waits for the engine's next operations: a safety net only, since every
 * operation ends without the held call (a revert that finds its lease gives up after a few tries).
 */
export const DETACHED_CAP_MS = 10_000;

/** What happens right after a flood's compaction (a roll-forward pending past one transaction). */
export type FloodFollowUp =
  /** The roll-forward stalls before its writes; a revert of that fold overtakes it (and a pin of the tail). */
  | { kind: "walker-meets-revert"; revertCrashes: boolean; pinFrac: number | null }
  /** The revert's restore stalls; a new fold of the restored messages overtakes it. */
  | { kind: "restore-meets-fold" }
  | { kind: "none" };

/** `engine` and `counters` name the messages a scenario adds (unique nonces across engines). */
export function createStallDraws(rng: Rng, engine: number, counters: PlanCounters) {
  /** Short holds mostly; some outlive the 250 ms lease, so another container may take over. */
  const ms = () => (rng.chance(0.7) ? rng.int(10, 120) : rng.int(150, 450));
  /** Before the first write (right after the reads), or between two transactions of a long roll-forward. */
  const write = () => rng.weighted([[1, 3], [2, 2], [3, 1]] as const);

  const held = (targets: ReadonlyArray<readonly [Target, number]>, detach: boolean): StallPlan => {
    const [method, at] = rng.weighted(targets);
    const timing = detach
      ? { ms: DETACHED_CAP_MS, detach: true, afterOps: rng.int(1, 3) }
      : { ms: ms(), detach: false, afterOps: 0 };
    if (method === "summarizer") return { on: "summarizer", nth: 1, ...timing };
    return { on: "store", method, nth: 1, at, write: at === "inside" ? write() : 0, ...timing };
  };

  return {
    /**
     * An operation the engine runs on its own: held 1 time in 5, mostly with the engine going on.
     * A tool group never detaches: its call and results are one step of an agent, which sends
     * nothing else before the results (a result that arrives after its call was folded is a group
     * of its own, docs/compaction.md "Never an orphan", and the check of tool groups assumes not).
     */
    forOp(kind: OpSpec["kind"]): StallPlan | null {
      const targets = TARGETS[kind];
      if (!targets || !rng.chance(0.2)) return null;
      const detach = rng.chance(0.7);
      return held(targets, detach && kind !== "group");
    },
    /** A burst member: the others run at the same time already, so the engine waits for it. */
    forMember(kind: OpSpec["kind"]): StallPlan | null {
      const targets = TARGETS[kind];
      if (!targets || !rng.chance(0.3)) return null;
      return held(targets, false);
    },
    /** An offer's answer delivered after the engine's next 1 to 3 operations, 1 time in 3. */
    lateBy: (): number => (rng.chance(0.35) ? rng.int(1, 3) : 0),
    /** An accepted offer answered on time: half the time its range summary is undone, then the answer comes again. */
    redeliverAfterUndo: (): boolean => rng.chance(0.5),
    /** A roll-forward that read META and the memory, then waits (the engine goes on for `afterOps`). */
    slowWalker: (afterOps: number): StallPlan => ({
      on: "store",
      method: "finishPendingArchive",
      nth: 1,
      at: "inside",
      write: write(),
      ms: DETACHED_CAP_MS,
      detach: true,
      afterOps,
    }),
    /** More flood messages: the fold's roll-forward then takes two or three transactions. */
    moreFlood: (): MessageDraft[] =>
      Array.from({ length: rng.int(100, 200) }, (_, k) => ({
        role: "ASSISTANT" as const,
        content: `Imported extra batch ${k}: ${rng.int(100, 9999)} rows checked.`,
        tags: [],
        nonce: `e${engine}.${counters.nonce++}`,
        idem: false,
      })),
    floodFollowUp(): FloodFollowUp {
      const kind = rng.weighted([
        ["walker-meets-revert", 5],
        ["restore-meets-fold", 2],
        ["none", 2],
      ] as const);
      if (kind === "walker-meets-revert") {
        return { kind, revertCrashes: rng.chance(0.3), pinFrac: rng.chance(0.5) ? 0.85 + 0.13 * rng.float() : null };
      }
      return { kind };
    },
  };
}

export type StallDraws = ReturnType<typeof createStallDraws>;
