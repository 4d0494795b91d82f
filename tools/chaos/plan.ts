/**
 * The chaos plan: every operation each simulated engine runs, with its parameters, the store fault
 * it meets, the summarizer outcomes it gets and how often its events are delivered, all drawn
 * from one seed before anything runs. Values that only exist at run time (which messages a range
 * covers, which memory a replayed roll-forward names) are planned as fractions of what is there.
 */
import type { Role } from "../../core/domain/model.js";
import { createRng, digest } from "./rng.js";

export const CHAOS_TENANTS = ["chaos-a", "chaos-b"] as const;
export const NONCE_TAG = "chaos-nonce:";

/** The Store methods of the commit protocol (plus the append) where faults are injected. */
export const FAULT_METHODS = [
  "acquireLease",
  "putMemory",
  "commitCompaction",
  "finishPendingArchive",
  "markArchived",
  "releaseLease",
  "appendMessage",
] as const;
export type FaultMethod = (typeof FAULT_METHODS)[number];

export interface StoreFaultPlan {
  method: FaultMethod;
  /** `before`: the write never happens. `after`: it applied and the caller never hears so. */
  when: "before" | "after";
  /** Which call of `method` in the operation fails (1 = the first). */
  nth: number;
  /** The container dies with the fault: nothing more is written, the next op runs in a new one. */
  crash: boolean;
}

export const SUMMARIZER_OUTCOMES = ["ok", "error", "throw", "timeout", "slow", "empty"] as const;
export type SummarizerOutcome = (typeof SUMMARIZER_OUTCOMES)[number];
export interface SummarizerStep {
  outcome: SummarizerOutcome;
  /** Latency of an answer that is not a timeout. */
  delayMs: number;
}

export interface MessageDraft {
  role: Role;
  content: string;
  /** Tags besides the nonce tag (strength, MODE:plan). */
  tags: string[];
  /** Unique per planned message; carried as a tag so the content stays as trivial as planned. */
  nonce: string;
  /** Sent with an idempotency key (then a failed attempt is retried with the same key). */
  idem: boolean;
}

export interface Prompt {
  contextWindow: number;
  /** prompt.tokens = ratio * contextWindow; null: no prompt, the service's own estimate. */
  ratio: number | null;
}

export type OpSpec =
  | { kind: "append"; message: MessageDraft; sendTwice: boolean }
  | { kind: "group"; call: MessageDraft; results: MessageDraft[] }
  | { kind: "turn"; message: MessageDraft | null; prompt: Prompt }
  | { kind: "compact"; force: "SOFT" | "HARD" | "EMERGENCY" | null; prompt: Prompt; instructions: boolean }
  | { kind: "range"; fromFrac: number; toFrac: number; topicLabel: string }
  | {
      kind: "plan";
      planId: string;
      topicLabel: string;
      marker: MessageDraft;
      steps: MessageDraft[];
      /** The PlanCompleted event is delivered this many times (at least once). */
      copies: number;
      concurrentCopies: boolean;
      accept: boolean;
      /** The user clicks "accept" twice: the second answer must be a 409 and change nothing. */
      answerTwice: boolean;
    }
  | { kind: "context" }
  | { kind: "replayArchive"; memoryFrac: number }
  | { kind: "flood"; messages: MessageDraft[] }
  | { kind: "restart" }
  | { kind: "burst"; members: BurstMember[] }
  /** PATCH a message's strength after the fact: the message at this fraction of the history. */
  | { kind: "pin"; messageFrac: number; strength: "pinned" | null }
  /** Undo the newest compaction (the active summary), as the inspector's "undo" does. */
  | { kind: "revert" };

export type BurstMember = {
  /** Index of the sibling container that runs it (0: the engine's own). */
  container: number;
  spec: Extract<OpSpec, { kind: "append" | "turn" | "compact" | "range" | "context" }>;
  fault: StoreFaultPlan | null;
  summarizer: SummarizerStep[];
};

export interface OpPlan {
  /** Global number of the op in the plan. */
  id: number;
  spec: OpSpec;
  fault: StoreFaultPlan | null;
  summarizer: SummarizerStep[];
  /** Every event the op publishes is delivered this many times (at least once). */
  deliveries: number;
  concurrentDeliveries: boolean;
}

export interface EnginePlan {
  index: number;
  tenantId: string;
  processId: string;
  projectId: string;
  parentProcessId: string | null;
  allowsCrossProjectSpawn: boolean;
  /** Messages appended when the engine starts (the original task first: it gets auto-pinned). */
  seed: MessageDraft[];
  ops: OpPlan[];
}

export interface ChaosPlan {
  seed: number;
  turns: number;
  leaseMs: number;
  /** Tunables saved for the second tenant, so the two tenants compact differently. */
  tenantSettings: Record<string, Record<string, number>>;
  engines: EnginePlan[];
  digest: string;
}

export interface PlanOptions {
  seed: number;
  /** Planned engine operations in all (setup appends not counted). */
  turns: number;
  engines?: number;
  leaseMs?: number;
}

const ACKS = ["ok", "Thanks!", "got it", "sounds good", "Great.", "thank you", "okay"];
const NARRATION = ["Let me check.", "I'll look into it.", "One moment.", "Let me look."];
const TOPICS = ["billing", "migration", "invoices", "search", "deploys", "audit", "certificates", "backups"];
const FACTS = [
  (t: string, k: number) => `The ${t} job must run in eu-west-1, batch ${k} is verified.`,
  (t: string, k: number) => `Decision: freeze ${t} changes until step ${k} passes review.`,
  (t: string, k: number) => `Found the ${t} bug: row ${k} had a NULL customer id.`,
  (t: string, k: number) => `Please draft the ${t} checklist, item ${k} first.`,
  (t: string, k: number) => `Результат ${k}: ${t} готов — ✓ 日本語 🚀`,
  (t: string, k: number) => `${t}: \u202Eright-to-left\u202C and zero\u200Bwidth text ${k}`,
];

export const defaultEngines = (turns: number) => Math.max(4, Math.min(8, 2 * Math.round(turns / 80)));

export function planChaos(options: PlanOptions): ChaosPlan {
  const seed = options.seed >>> 0;
  const root = createRng(seed);
  const engineCount = Math.max(2, options.engines ?? defaultEngines(options.turns));
  const leaseMs = options.leaseMs ?? 250;
  let opId = 0;
  let nonce = 0;

  const engines: EnginePlan[] = [];
  for (let e = 0; e < engineCount; e++) {
    const rng = root.fork(`engine-${e}`);
    const tenantId = CHAOS_TENANTS[e % 2]!;
    const slot = Math.floor(e / 2);
    // The same process ids in both tenants: nothing may cross between them.
    const processId = `p${slot}`;
    const crossProject = slot === 2;
    const draft = (role: Role, content: string, tags: string[] = [], idem = rng.chance(0.6)): MessageDraft => ({
      role,
      content,
      tags,
      nonce: `e${e}.${nonce++}`,
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
    const COMPACTION: FaultMethod[] = ["acquireLease", "putMemory", "commitCompaction", "finishPendingArchive", "releaseLease"];
    const PENDING: FaultMethod[] = ["commitCompaction", "finishPendingArchive", "finishPendingArchive", "markArchived", "releaseLease"];

    const seedMessages = [
      draft("SYSTEM", "You are the billing assistant of the ops team.", ["STRENGTH:pinned"], true),
      draft("USER", `Original task: migrate the ${rng.pick(TOPICS)} system without losing data.`, [], true),
      ...Array.from({ length: 12 }, (_, i) => message(i % 2 ? "USER" : "ASSISTANT")),
    ];

    const ops: OpPlan[] = [];
    const perEngine = Math.floor(options.turns / engineCount) + (e < options.turns % engineCount ? 1 : 0);
    let floods = 0;
    const push = (spec: OpSpec, faultPlan: StoreFaultPlan | null, steps = summarizerSteps()) =>
      ops.push({
        id: opId++,
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
    const simple = (kind: "append" | "turn" | "compact" | "range" | "context"): BurstMember["spec"] => {
      switch (kind) {
        case "append":
          return { kind, message: message(), sendTwice: false };
        case "turn":
          return { kind, message: rng.chance(0.85) ? message() : null, prompt: prompt() };
        case "compact":
          return {
            kind,
            force: rng.weighted<"SOFT" | "HARD" | "EMERGENCY" | null>([
              [null, 2],
              ["SOFT", 1],
              ["HARD", 2],
              ["EMERGENCY", 1.5],
            ]),
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

    while (ops.length < perEngine) {
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
          const results = Array.from({ length: n }, (_, k) => draft("TOOL", `{"rows": ${rng.int(0, 5000)}, "k": ${k}}`, [], true));
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
          push({ kind: "compact", force: rng.pick(["HARD", "EMERGENCY"] as const), prompt: prompt(), instructions: false }, pendingFault && { ...pendingFault, nth: 1 });
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
        case "burst": {
          const n = rng.int(2, 4);
          const members: BurstMember[] = Array.from({ length: n }, (_, k) => {
            const spec = simple(
              rng.weighted<"append" | "turn" | "compact" | "range" | "context">([
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
          push({ kind, members }, null);
          break;
        }
      }
    }

    engines.push({
      index: e,
      tenantId,
      processId,
      projectId: crossProject ? "proj-other" : "proj-main",
      parentProcessId: slot === 1 || slot === 2 ? "p0" : null,
      allowsCrossProjectSpawn: crossProject,
      seed: seedMessages,
      ops,
    });
  }

  const tenantSettings = {
    [CHAOS_TENANTS[1]]: { keepRecent: 6, softAnchor: 6, hardAnchor: 3, emergencyAnchor: 2, summaryMaxTokens: 60 },
  };
  const body = { seed, turns: options.turns, leaseMs, tenantSettings, engines };
  return { ...body, digest: digest(body) };
}
