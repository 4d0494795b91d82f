/**
 * The random pieces one engine's plan is built from: messages (trivial acknowledgements, filler
 * and facts worth keeping, in several scripts), prompts at every threshold, summarizer outcomes
 * and store faults. Every draw comes from the engine's own stream, in a fixed order, so a seed
 * always gives the same plan; changing the order of draws here changes every plan.
 */
import type { Role } from "../../core/domain/model.js";
import { FOLD_MODES, type FoldModeName } from "../../core/domain/mode-policy.js";
import type { Rng } from "./rng.js";
import type { BurstMember, FaultMethod, MessageDraft, Prompt, StoreFaultPlan, SummarizerOutcome, SummarizerStep } from "./plan-model.js";

const ACKS = ["ok", "Thanks!", "got it", "sounds good", "Great.", "thank you", "okay"];
const NARRATION = ["Let me check.", "I'll look into it.", "One moment.", "Let me look."];
export const TOPICS = ["billing", "migration", "invoices", "search", "deploys", "audit", "certificates", "backups"];
const FACTS = [
  (t: string, k: number) => `The ${t} job must run in eu-west-1, batch ${k} is verified.`,
  (t: string, k: number) => `Decision: freeze ${t} changes until step ${k} passes review.`,
  (t: string, k: number) => `Found the ${t} bug: row ${k} had a NULL customer id.`,
  (t: string, k: number) => `Please draft the ${t} checklist, item ${k} first.`,
  (t: string, k: number) => `Результат ${k}: ${t} готов — ✓ 日本語 🚀`,
  (t: string, k: number) => `${t}: \u202Eright-to-left\u202C and zero\u200Bwidth text ${k}`,
];

/** The store calls of a compaction, where a turn's or a compaction's fault may land. */
export const COMPACTION: readonly FaultMethod[] = ["acquireLease", "putMemory", "commitCompaction", "finishPendingArchive", "releaseLease"];
/** The calls of a commit that leaves a roll-forward pending (finishPendingArchive weighed double). */
export const PENDING: readonly FaultMethod[] = ["commitCompaction", "finishPendingArchive", "finishPendingArchive", "markArchived", "releaseLease"];

/** Numbers shared by all engines of one plan, so op ids and message nonces are unique across them. */
export interface PlanCounters {
  opId: number;
  nonce: number;
}

export type SimpleKind = BurstMember["spec"]["kind"];

/** The draws of engine `engine`, all from `rng` (its own stream). */
export function createDraws(rng: Rng, engine: number, counters: PlanCounters) {
  const draft = (role: Role, content: string, tags: string[] = [], idem = rng.chance(0.6)): MessageDraft => ({
    role,
    content,
    tags,
    nonce: `e${engine}.${counters.nonce++}`,
    idem,
  });
  const strengthTags = (): string[] =>
    rng.weighted<string[]>([
      [[], 6],
      [["STRENGTH:weak"], 1],
      [["STRENGTH:normal"], 1],
      [["STRENGTH:strong"], 1.5],
      [["STRENGTH:pinned"], 0.4],
    ]);
  const text = (): string => {
    const topic = rng.pick(TOPICS);
    return rng.weighted<() => string>([
      [() => rng.pick(ACKS), 2],
      [() => rng.pick(NARRATION), 1],
      [() => rng.pick(FACTS)(topic, rng.int(1, 999)), 6],
    ])();
  };
  const message = (role: Role = rng.weighted<Role>([["USER", 4], ["ASSISTANT", 5], ["SYSTEM", 0.5]])): MessageDraft =>
    draft(role, text(), strengthTags());
  const prompt = (): Prompt => ({
    contextWindow: rng.pick([8_000, 32_000, 128_000, 200_000]),
    ratio: rng.weighted<number | null>([
      [null, 1],
      [0.1, 4],
      [0.5, 3],
      [0.9, 3],
      [0.97, 2],
      [1.3, 0.5],
    ]),
  });
  const summarizerSteps = (p = 0.25): SummarizerStep[] =>
    Array.from({ length: 2 }, () => ({
      outcome: rng.chance(p)
        ? rng.weighted<SummarizerOutcome>([
            ["error", 3.5],
            ["throw", 1.5],
            ["timeout", 2],
            ["slow", 1.5],
            ["empty", 1],
          ])
        : "ok",
      delayMs: rng.int(0, 25),
    }));
  const fault = (methods: readonly FaultMethod[], p: number): StoreFaultPlan | null => {
    if (!rng.chance(p)) return null;
    const when = rng.chance(0.5) ? "before" : "after";
    return { method: rng.pick(methods), when, nth: rng.chance(0.8) ? 1 : 2, crash: when === "after" || rng.chance(0.5) };
  };
  /**
   * putMemory (the FAILED row) and releaseLease are only reached after a failed summary or a lost
   * commit: an op that plans a fault there also plans its summarizer to fail first.
   */
  const reach = (f: StoreFaultPlan | null, steps: SummarizerStep[]): SummarizerStep[] =>
    f && (f.method === "putMemory" || f.method === "releaseLease") && steps[0]!.outcome === "ok"
      ? [{ ...steps[0]!, outcome: rng.pick(["error", "throw", "timeout", "empty"] as const) }, ...steps.slice(1)]
      : steps;
  /** An op that is one service call, alone or as a burst member. */
  const simple = (kind: SimpleKind): BurstMember["spec"] => {
    switch (kind) {
      case "append":
        return { kind, message: message(), sendTwice: false };
      case "turn":
        return { kind, message: rng.chance(0.85) ? message() : null, prompt: prompt() };
      case "compact":
        return {
          kind,
          // A forced mode in 4.5 of 6.5 compactions, each mode of the policy table alike.
          force: rng.weighted<FoldModeName | null>([[null, 2], ...FOLD_MODES.map((m) => [m, 4.5 / FOLD_MODES.length] as const)]),
          prompt: prompt(),
          instructions: rng.chance(0.2),
        };
      case "range": {
        const a = rng.float();
        const b = rng.float();
        return { kind, fromFrac: Math.min(a, b), toFrac: Math.max(a, b), topicLabel: `${rng.pick(TOPICS)}-${rng.int(1, 99)}` };
      }
      case "context":
        return { kind };
    }
  };
  return { rng, draft, text, message, prompt, summarizerSteps, fault, reach, simple };
}

export type Draws = ReturnType<typeof createDraws>;
