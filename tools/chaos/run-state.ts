/**
 * The state one chaos run shares between its parts: the options, the store under test, the
 * counters, what the services published, the offers made, and the simulated engines with their
 * "Lambda containers". Every part of the harness takes this one object, so the operations, the
 * event deliveries and the checks see the same events and offers without module-level globals
 * (two runs in one process stay apart).
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { silentLog } from "../../core/adapters/log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import type { AppendMessageBody } from "../../core/adapters/http/schemas.js";
import { createDeps } from "../../core/composition/create-deps.js";
import type { Tunables } from "../../core/domain/tunables.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { DomainEvent } from "../../core/ports/events.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { keyString, type AppendLedger } from "./checks.js";
import { NONCE_TAG, type ChaosPlan, type EnginePlan, type MessageDraft, type StallPlan } from "./plan.js";
import type { Stats } from "./report.js";
import { createChaosSummarizer } from "./summarizer.js";

export interface ChaosOptions {
  seed: number;
  /** Planned engine operations in all. */
  turns: number;
  engines?: number;
  leaseMs?: number;
  /** A running DynamoDB Local (or DynamoDB) endpoint; the harness creates its own table in it. */
  endpoint: string;
  tableName?: string;
  /** Check the touched process's invariants after every n-th operation of an engine (default 1). */
  checkEvery?: number;
  /** Progress lines (the CLI prints them). */
  progress?: (line: string) => void;
  /**
   * Replaces the real store under test (the harness's own test breaks it on purpose); it gets the
   * table too, for a broken store that writes past the port.
   */
  wrapStore?: (store: Store, table: { client: DynamoDBDocumentClient; tableName: string }) => Store;
  /**
   * `inline` (default): turns summarize in the request, so the plan's faults meet every step of
   * the commit protocol. `background`: turns queue folds and commit prepared ones; the harness
   * delivers CompactionRequested to the worker (twice, late, crashing before and after it stores
   * the prepared summary) between operations.
   */
  execution?: "inline" | "background";
  /**
   * Hold store calls, summarizer answers and offer answers as the plan says (default true;
   * tools/chaos/README.md, "Stalls"). Off: the plan of the seed from before stalls existed.
   */
  stalls?: boolean;
}

/** A simulated Lambda container: its own deps (caches, id factory). A crash replaces it. */
export interface Container {
  id: string;
  deps: ServiceDeps;
}

export interface PublishedEvent extends DomainEvent {
  container: string;
  /** Handler deliveries that returned normally (InboxItemAnswered and CompactionRequested). */
  delivered: number;
  /** A late delivery will bring it: no other delivery takes it meanwhile. */
  claimed?: boolean;
}

export interface OfferRecord {
  tenantId: string;
  processId: string;
  itemId: string;
  answered: "ACCEPTED" | "DECLINED" | null;
  /** What each acknowledged delivery of InboxItemAnswered returned. */
  outcomes: string[];
}

/** One simulated engine: its process, what it saw acknowledged, and its current container. */
export interface Engine {
  plan: EnginePlan;
  key: ProcessKey;
  ledger: AppendLedger;
  /** Every memory id a result named (OK or FAILED): none may disappear. */
  memories: Set<string>;
  container: Container;
  /** Other containers that serve the same process during bursts (other Lambda instances). */
  siblings: Array<Container | undefined>;
  opsRun: number;
  /** Messages a PATCH pinned (and no later PATCH unpinned): they must stay active. */
  pinned: Set<string>;
  /** Every message whose strength a PATCH changed. */
  reweighed: Set<string>;
  /**
   * Work of the engine that runs while it goes on: operations whose stall detached them, late
   * deliveries. While any runs, the checks that need a quiet process wait (see {@link busy}).
   */
  background: Set<Promise<void>>;
  /** Late deliveries, started once the engine has run `due` operations. */
  late: Array<{ due: number; deliver: () => Promise<void> }>;
  /** Held calls waiting for the engine to have run `at` operations. */
  waiting: Array<{ at: number; resume: () => void }>;
  /** The engine ran all its operations: nothing waits for more of them. */
  finished: boolean;
  /** Its process is being deleted (out of the other invariants) or was, a repeat DELETE answering 204 (ops-delete.ts). */
  deletion: "deleting" | "deleted" | null;
  /**
   * What DynamoDB's TTL removed from the process after a clock jump (ops-lifecycle.ts): each
   * item's id, and for a message the memory it was archived into then.
   */
  expired: Map<string, string | null>;
  /** The hash of the native content of each message sent with one, by nonce (native-messages.ts). */
  native: Map<string, string>;
  /** The hash of each provider block its summarizer answered, by the block's tag (tools/chaos/summarizer.ts). */
  blocks: Map<string, string>;
  /**
   * What the engine's last quiet turn answered (its block and messages as an engine sends them):
   * the next quiet turn that says `prefix.kept` must start with it (docs/turns.md, "Append-only
   * between folds"). Undefined after a turn that ran beside other work of the engine.
   */
  lastPrompt?: Record<string, unknown> | undefined;
}

export interface ChaosRun {
  plan: ChaosPlan;
  /** The store under test without injected faults: the harness reads what really happened from it. */
  inner: Store;
  /** The table itself, for what the store no longer reads (a deleted process's items). */
  table: { client: DynamoDBDocumentClient; tableName: string };
  /** The blob store every container shares (it outlives their crashes, as object storage does). */
  blobs: BlobStore;
  options: ChaosOptions;
  leaseMs: number;
  stats: Stats;
  /** Everything the services published, in order, with how often a handler acknowledged it. */
  events: PublishedEvent[];
  /** Offers by `tenant/itemId`. */
  offers: Map<string, OfferRecord>;
  /** Each tenant's tunables, read once after setup, for the anchor checks. */
  tunables: Map<string, Tunables>;
  /** Queued range jobs (fold ids) and the accepted offer each one folds. */
  rangeJobs: Map<string, OfferRecord>;
  /** Containers created so far (their ids). */
  containers: number;
  /** CompactionRequested deliveries of prepare jobs so far: every third one makes a crash due. */
  workerDeliveries: number;
  /** A worker crash is due and waits for a delivery that reaches the store (deliveries.ts). */
  workerCrashDue: boolean;
  /** Worker crashes that happened; the next one crashes before the store if even, after if odd. */
  workerCrashes: number;
  /** Deliveries of commit jobs so far: every second one makes a crash at the commit transaction due. */
  commitDeliveries: number;
  commitCrashDue: boolean;
  /** Commit-job crashes that happened; the next one crashes before the transaction if even, after it if odd. */
  commitCrashes: number;
  /** Planned stalls that have held a call (each holds one call only). */
  stallsBegun: WeakSet<StallPlan>;
  /** The copies the engines' exports were imported into (ops-lifecycle.ts): live processes of their tenant. */
  copies: ProcessKey[];
  /** How far every container's clock is ahead of the wall clock: the expiries moved it (ops-lifecycle.ts). */
  clockAheadMs: number;
  /**
   * Range jobs (fold ids) whose worker request was still undelivered when the clock jumped, and
   * the clock (epoch ms) right after the last such jump: no platform holds a request that long.
   */
  heldAcrossJump: Map<string, number>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Something of the engine's runs in the background: the process is not quiet. */
export const busy = (e: Engine) => e.background.size > 0;

/** Runs `work` in the engine's background (registered before it starts); its errors are the caller's to catch. */
export function inBackground(e: Engine, work: () => Promise<void>) {
  const task: Promise<void> = Promise.resolve()
    .then(work)
    .finally(() => e.background.delete(task));
  e.background.add(task);
  return task;
}

/** Resolves once the engine has run `n` more operations than it has now, or after `capMs`. */
export function afterOps(e: Engine, n: number, capMs: number): Promise<void> {
  if (e.finished) return Promise.resolve();
  return new Promise<void>((resume) => {
    const timer = setTimeout(resume, capMs);
    e.waiting.push({
      at: e.opsRun + n,
      resume: () => {
        clearTimeout(timer);
        resume();
      },
    });
  });
}

/** Counts one finished operation of the engine and resumes the calls held until then. */
export function progressed(e: Engine) {
  e.opsRun++;
  const due = e.waiting.filter((w) => w.at <= e.opsRun);
  e.waiting = e.waiting.filter((w) => w.at > e.opsRun);
  for (const w of due) w.resume();
}

/** The engine has no more operations: everything it held resumes now, and nothing waits later. */
export function resumeAll(e: Engine) {
  e.finished = true;
  for (const w of e.waiting.splice(0)) w.resume();
}

/** A prompt well below every threshold: the call only settles the process. */
export const QUIET = { model: { contextWindow: 100_000 }, prompt: { tokens: 0 } } as const;

export const where = (e: Engine) => keyString(e.key);

export const detailOf = (e: DomainEvent) => e.detail as { tenantId: string; itemId: string; processId: string; memoryId: string };

export const sameProcess = (ev: PublishedEvent, e: Engine) => detailOf(ev).tenantId === e.key.tenantId && detailOf(ev).processId === e.key.processId;

/** A new "Lambda container": its own deps (caches, id factory), publishing into the harness. */
export function newContainer(run: ChaosRun): Container {
  const id = `c${++run.containers}`;
  const deps = createDeps({
    // The worker does not wait for a lease here: the harness redelivers, like Lambda's retries.
    env: {
      COMPACTION_LEASE_MS: String(run.leaseMs),
      COMPACTION_EXECUTION: run.options.execution ?? "inline",
      COMPACTION_LEASE_WAIT_MS: "0",
      // Background: prepare from the plan's SOFT prompts (0.5) on, so the worker has work on most turns.
      ...(run.options.execution === "background" ? { COMPACTION_PREPARE_THRESHOLD: "0.45", COMPACTION_KEEP_RECENT: "4" } : {}),
    },
    store: run.inner,
    events: { publish: async (event) => void run.events.push({ ...event, container: id, delivered: 0 }) },
    metrics: createRecordingMetrics(),
    log: silentLog,
    summarizerFactory: async () => createChaosSummarizer({ steps: [], leaseMs: run.leaseMs }),
  });
  deps.blobs = run.blobs;
  // One clock for every container, moved by the expiries: a jump is seen by every call at once.
  deps.clock = { now: () => new Date(Date.now() + run.clockAheadMs) };
  return { id, deps };
}

/** Replaces a dead (or deliberately restarted) container of the engine with a fresh one. */
export function restart(run: ChaosRun, e: Engine, which: Container) {
  run.stats.restarts++;
  const fresh = newContainer(run);
  if (which === e.container) e.container = fresh;
  const i = e.siblings.indexOf(which);
  if (i >= 0) e.siblings[i] = fresh;
}

/** The container a burst member runs in: 0 is the engine's own, others are created on first use. */
export const sibling = (run: ChaosRun, e: Engine, index: number): Container =>
  index === 0 ? e.container : (e.siblings[index - 1] ??= newContainer(run));

/** The request body of a planned message: its nonce rides in a tag, its idempotency key derives from it. */
export const appendBody = (m: MessageDraft, extra: Partial<AppendMessageBody> = {}): AppendMessageBody => ({
  role: m.role,
  content: m.content,
  tags: [...m.tags, `${NONCE_TAG}${m.nonce}`],
  ...(m.idem ? { idempotencyKey: `k-${m.nonce}` } : {}),
  ...extra,
});
