/**
 * The plan of one simulated engine: which tenant and process it drives (the same process ids in
 * both tenants, parents and a cross-project worker among them), the messages it starts with, and
 * its share of the operations, drawn as a weighted mix. Some kinds come with what makes them
 * bite: a flood is followed by a compaction too big for one transaction, a burst may race an
 * append with its own retry.
 */
import { CHAOS_TENANTS, type BurstMember, type EnginePlan, type OpPlan, type OpSpec, type StoreFaultPlan } from "./plan-model.js";
import { COMPACTION, createDraws, PENDING, TOPICS, type Draws, type PlanCounters, type SimpleKind } from "./plan-draws.js";
import { createStallDraws, type StallDraws } from "./plan-stalls.js";
import type { Rng } from "./rng.js";
import { FOLD_MODES, MODE_POLICY } from "../../core/domain/mode-policy.js";

/** The modes that fold normal messages: a flood of them must fold in one of these. */
const FOLDS_NORMAL = FOLD_MODES.filter((m) => MODE_POLICY[m].folds.includes("normal"));

export interface EngineSlot {
  /** The engine's number; its draws come from the stream `engine-<index>` of the plan's seed. */
  index: number;
  engineCount: number;
  /** Planned operations of the whole plan, shared out evenly. */
  turns: number;
  /** Plan stalls, from the stream `engine-<index>/stalls` (the other draws do not change). */
  stalls: boolean;
}

export function planEngine(root: Rng, slot: EngineSlot, counters: PlanCounters): EnginePlan {
  const e = slot.index;
  const rng = root.fork(`engine-${e}`);
  const tenantId = CHAOS_TENANTS[e % 2]!;
  const pair = Math.floor(e / 2);
  // The same process ids in both tenants: nothing may cross between them.
  const processId = `p${pair}`;
  const crossProject = pair === 2;
  const draws = createDraws(rng, e, counters);
  const { draft, message } = draws;

  const seedMessages = [
    draft("SYSTEM", "You are the billing assistant of the ops team.", ["STRENGTH:pinned"], true),
    draft("USER", `Original task: migrate the ${rng.pick(TOPICS)} system without losing data.`, [], true),
    ...Array.from({ length: 12 }, (_, i) => message(i % 2 ? "USER" : "ASSISTANT")),
  ];
  const perEngine = Math.floor(slot.turns / slot.engineCount) + (e < slot.turns % slot.engineCount ? 1 : 0);

  return {
    index: e,
    tenantId,
    processId,
    projectId: crossProject ? "proj-other" : "proj-main",
    parentProcessId: pair === 1 || pair === 2 ? "p0" : null,
    allowsCrossProjectSpawn: crossProject,
    seed: seedMessages,
    ops: planOps(draws, perEngine, counters, slot.stalls ? createStallDraws(root.fork(`engine-${e}/stalls`), e, counters) : null),
  };
}

/** `perEngine` operations drawn as a weighted mix of every kind. */
function planOps(draws: Draws, perEngine: number, counters: PlanCounters, stalls: StallDraws | null): OpPlan[] {
  const { rng, draft, text, message, prompt, summarizerSteps, fault, reach, simple } = draws;
  const ops: OpPlan[] = [];
  let floods = 0;
  /** Ops a stall scenario adds (after a flood, after an accepted offer): they come with their stalls and draw nothing else. */
  const inserted = new Set<OpPlan>();
  const insert = (spec: OpSpec, extra: Partial<OpPlan> = {}) => {
    const op: OpPlan = { id: counters.opId++, spec, fault: null, summarizer: [], deliveries: 1, concurrentDeliveries: false, ...extra };
    inserted.add(op);
    ops.push(op);
  };
  const push = (spec: OpSpec, faultPlan: StoreFaultPlan | null, steps = summarizerSteps()) =>
    ops.push({
      id: counters.opId++,
      spec,
      fault: faultPlan,
      summarizer: reach(faultPlan, steps),
      deliveries: rng.weighted([
        [1, 5],
        [2, 3],
        [3, 1],
      ]),
      concurrentDeliveries: rng.chance(0.4),
    });

  while (ops.length < perEngine) {
    const first = ops.length;
    const kind = rng.weighted<OpSpec["kind"]>([
      ["append", 24],
      ["group", 5],
      ["turn", 24],
      ["compact", 14],
      ["range", 5],
      ["plan", 6],
      ["context", 5],
      ["burst", 9],
      ["replayArchive", 3],
      ["flood", floods < 1 + Math.floor(perEngine / 150) && perEngine - ops.length > 2 ? 2 : 0],
      ["restart", 2],
      ["pin", 4],
      ["revert", 2],
    ]);
    switch (kind) {
      case "append": {
        const m = message();
        const sendTwice = rng.chance(0.15);
        // A client that sends twice uses an idempotency key, or the duplicate is its own doing.
        if (sendTwice) m.idem = true;
        push({ kind, message: m, sendTwice }, fault(["appendMessage"], 0.25));
        break;
      }
      case "group": {
        const n = rng.int(1, 3);
        const call = draft("ASSISTANT", `Calling ${n} tool(s) for ${rng.pick(TOPICS)}.`, rng.chance(0.2) ? ["STRENGTH:strong"] : [], true);
        // Every fifth result fails, so folds give the evidence ledger open and resolved errors to carry.
        const results = Array.from({ length: n }, (_, k) => {
          const rows = rng.int(0, 5000);
          return draft("TOOL", `{"rows": ${rows}, "k": ${k}}${rows % 5 === 0 ? "\nError: step failed\nExit code: 1" : "\nExit code: 0"}`, [], true);
        });
        push({ kind, call, results }, fault(["appendMessage"], 0.25));
        break;
      }
      case "turn":
        push(simple("turn"), fault([...COMPACTION, "appendMessage"], 0.35));
        break;
      case "compact":
        push(simple("compact"), fault(COMPACTION, 0.5));
        break;
      case "range":
        push(simple("range"), fault(COMPACTION, 0.3));
        break;
      case "context":
        push({ kind }, fault(["finishPendingArchive"], 0.2));
        break;
      case "plan": {
        const topicLabel = `${rng.pick(TOPICS)}-plan`;
        push(
          {
            kind,
            planId: `plan-${ops.length}`,
            topicLabel,
            marker: draft("USER", `Let's plan the ${topicLabel} work.`, ["MODE:plan"], true),
            steps: Array.from({ length: rng.int(2, 5) }, (_, k) => draft(k % 2 ? "USER" : "ASSISTANT", `Plan step ${k}: ${text()}`, [], true)),
            copies: rng.weighted([
              [1, 4],
              [2, 3],
              [3, 1],
            ]),
            concurrentCopies: rng.chance(0.5),
            accept: rng.chance(0.75),
            answerTwice: rng.chance(0.2),
          },
          fault([...COMPACTION, "appendMessage"], 0.3),
        );
        break;
      }
      case "replayArchive":
        push({ kind, memoryFrac: rng.float() }, fault(["markArchived"], 0.3));
        break;
      case "flood": {
        floods++;
        const n = rng.int(104, 112);
        // Ends with a USER message: the triggering turn (newest USER onwards) is never folded.
        const messages = Array.from({ length: n }, (_, k) =>
          draft(k === n - 1 ? "USER" : "ASSISTANT", `Imported batch ${k}: ${rng.int(100, 9999)} rows checked.`, [], false),
        );
        push({ kind, messages }, null);
        // More archives than one transaction holds: the commit leaves a roll-forward pending.
        const pendingFault = fault(PENDING, 0.9);
        push({ kind: "compact", force: rng.pick(FOLDS_NORMAL), prompt: prompt(), instructions: false }, pendingFault && { ...pendingFault, nth: 1 });
        if (stalls) followFlood(stalls, ops, insert, perEngine);
        break;
      }
      case "restart":
        push({ kind }, null);
        break;
      case "pin":
        push({ kind, messageFrac: rng.float(), strength: rng.chance(0.7) ? "pinned" : null }, null);
        break;
      case "revert":
        push({ kind }, fault(["acquireLease", "finishPendingArchive", "releaseLease"], 0.3));
        break;
      case "burst":
        push({ kind, members: planBurst(draws) }, null);
        break;
    }
    if (stalls) {
      for (const op of ops.slice(first)) {
        if (inserted.has(op)) continue;
        addStalls(stalls, op);
        // The range summary of an accepted offer undone, then the offer's answer delivered again.
        if (op.spec.kind === "plan" && op.spec.accept && !op.lateBy && stalls.redeliverAfterUndo() && perEngine - ops.length >= 1) {
          op.redeliver = 1;
          insert({ kind: "revert" });
        }
      }
    }
  }
  return ops;
}

/** The stalls of an op the plan drew (a scenario's ops come with theirs). */
function addStalls(stalls: StallDraws, op: OpPlan) {
  if (op.spec.kind === "burst") {
    for (const m of op.spec.members) {
      const stall = stalls.forMember(m.spec.kind);
      if (stall) m.stall = stall;
    }
    return;
  }
  if (op.stall || op.spec.kind === "flood") return;
  const stall = stalls.forOp(op.spec.kind);
  if (stall) op.stall = stall;
  if (op.spec.kind === "plan") {
    const late = stalls.lateBy();
    if (late > 0) op.lateBy = late;
  }
}

/**
 * After a flood's compaction (its roll-forward pending past one transaction): the roll-forward
 * that read META stalls before its writes and a revert of the fold overtakes it (then a pin of
 * the flood's tail), or the revert's restore stalls and a new fold overtakes it. A walker that
 * resumes must change nothing (docs/compaction.md, "The commit protocol").
 */
function followFlood(stalls: StallDraws, ops: OpPlan[], insert: (spec: OpSpec, extra?: Partial<OpPlan>) => void, perEngine: number) {
  const follow = stalls.floodFollowUp();
  const compaction = ops.at(-1)!;
  const flood = ops.at(-2)!.spec;
  const room = perEngine - ops.length;
  // A roll-forward of several transactions, so a walker can also stall between two of them; the
  // flood still ends with its USER message (the triggering turn).
  if (follow.kind !== "none" && flood.kind === "flood") flood.messages.splice(flood.messages.length - 1, 0, ...stalls.moreFlood());
  if (follow.kind === "walker-meets-revert" && room >= 3) {
    // The compaction's own walker (when its fault lets it run), else the next reader's.
    compaction.stall = stalls.slowWalker(2);
    insert({ kind: "context" }, { stall: stalls.slowWalker(1) });
    insert(
      { kind: "revert" },
      follow.revertCrashes ? { fault: { method: "finishPendingArchive", when: "before", nth: 1, crash: true } } : {},
    );
    if (follow.pinFrac !== null) insert({ kind: "pin", messageFrac: follow.pinFrac, strength: "pinned" });
  } else if (follow.kind === "restore-meets-fold" && room >= 2) {
    insert({ kind: "revert" }, { stall: stalls.slowWalker(1) });
    insert({ kind: "compact", force: "EMERGENCY", prompt: { contextWindow: 8_000, ratio: 1.3 }, instructions: false });
  }
}

/** Two to four single-call ops at once, in up to three containers of the same process. */
function planBurst({ rng, fault, reach, summarizerSteps, simple }: Draws): BurstMember[] {
  const n = rng.int(2, 4);
  const members: BurstMember[] = Array.from({ length: n }, (_, k) => {
    const spec = simple(
      rng.weighted<SimpleKind>([
        ["compact", 4],
        ["turn", 3],
        ["append", 2],
        ["range", 1],
        ["context", 1],
      ]),
    );
    const memberFault = fault(spec.kind === "append" ? ["appendMessage"] : spec.kind === "turn" ? [...COMPACTION, "appendMessage"] : COMPACTION, 0.15);
    return { container: k === 0 ? 0 : rng.int(0, 2), spec, fault: memberFault, summarizer: reach(memberFault, summarizerSteps(0.2)) };
  });
  // Sometimes the same append is delivered twice at once (a client retry racing the first).
  const twin = members.find((m) => m.spec.kind === "append");
  if (twin && twin.spec.kind === "append" && rng.chance(0.5)) {
    const copy = { ...twin.spec.message, idem: true };
    twin.spec = { kind: "append", message: copy, sendTwice: false };
    members.push({ container: 1, spec: { kind: "append", message: copy, sendTwice: false }, fault: null, summarizer: [] });
  }
  return members;
}
