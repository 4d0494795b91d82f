/**
 * What a chaos plan is made of: the operations an engine runs, the store fault and summarizer
 * outcomes each one meets, and how often its events are delivered. Types and the fixed lists
 * the plan draws from, apart from the drawing itself (plan.ts), so the harness and the tests can
 * read the shape without the randomness.
 */
import type { Role } from "../../core/domain/model.js";
import type { FoldModeName } from "../../core/domain/mode-policy.js";

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

/**
 * The Store methods a stall may hold (tools/stalling-store.ts): the reads a decision is made on,
 * the writes of the commit protocol, the roll-forward, the append, the PATCH, a prepared fold's
 * extension and discard, a delete's tombstone and erasure, a tenant's erasure, and the daily
 * budget's reservation and count.
 */
export const STALL_METHODS = [
  "activeView",
  "acquireLease",
  "commitCompaction",
  "revertCompaction",
  "finishPendingArchive",
  "releaseLease",
  "appendMessage",
  "updateMessageTags",
  "storeFold",
  "extendFold",
  "discardFold",
  "listMessages",
  "markDeleted",
  "eraseItems",
  "markTenantErased",
  "eraseTenantRecords",
  "reserveTokens",
  "addUsage",
] as const;
export type StallMethod = (typeof STALL_METHODS)[number];

/**
 * A call held for a while (tools/chaos/README.md, "Stalls"). A detached stall lets the engine go on:
 * it runs its next `afterOps` operations while the call waits (at most `ms`), as if the request
 * had timed out on the client while its Lambda was still working; then the call resumes.
 */
export type StallPlan = (
  | {
      on: "store";
      method: StallMethod;
      /** Which call of `method` in the operation (1 = the first). */
      nth: number;
      /** `before` it reaches the store, `after` it applied, or `inside`: before its `write`-th DynamoDB write. */
      at: "before" | "inside" | "after";
      write: number;
    }
  /** The summarizer's `nth` answer is late. */
  | { on: "summarizer"; nth: number }
) & { ms: number; detach: boolean; afterOps: number };

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
  | { kind: "compact"; force: FoldModeName | null; prompt: Prompt; instructions: boolean }
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
  | { kind: "revert" }
  /**
   * DELETE the engine's process (docs/api.md, "Deleting a process"), repeated until it answers
   * 204: `inlineItems` erased within the call (fewer than the process holds: the worker erases
   * the rest), the container crashing at `crash` once, the ops before it still in flight.
   */
  | { kind: "delete"; inlineItems: number; crash: { method: "eraseItems" | "finishDeletion"; when: "before" | "after" } | null }
  /**
   * Export the process page by page (`pageBytes` a page) and import the file into a new id, then
   * check the copy, fold it and check it again (a 409 `export.changed` makes no copy).
   */
  | { kind: "copy"; pageBytes: number }
  /** Move every container's clock `days` ahead, then let DynamoDB's TTL remove what is due in the process. */
  | { kind: "expire"; days: number };

export type BurstMember = {
  /** Index of the sibling container that runs it (0: the engine's own). */
  container: number;
  spec: Extract<OpSpec, { kind: "append" | "turn" | "compact" | "range" | "context" }>;
  fault: StoreFaultPlan | null;
  summarizer: SummarizerStep[];
  /** Never detached: the members already run at once. */
  stall?: StallPlan;
};

export interface OpPlan {
  /** Global number of the op in the plan. */
  id: number;
  spec: OpSpec;
  fault: StoreFaultPlan | null;
  summarizer: SummarizerStep[];
  /** A call of the op held for a while (absent with stalls off, so such a plan is the one from before stalls). */
  stall?: StallPlan;
  /** The op's InboxItemAnswered events arrive after the engine's next `lateBy` operations (absent: right after it). */
  lateBy?: number;
  /**
   * Its InboxItemAnswered events arrive once more after the engine's next `redeliver` operations
   * (a revert of the range summary among them): an undone range fold must stay undone.
   */
  redeliver?: number;
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
  /** Absent when off (the digest of such a plan is the one from before stalls). */
  stalls?: true;
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
  /** Plan stalls (default true). Without them the plan is the one of the same seed before stalls existed. */
  stalls?: boolean;
}
