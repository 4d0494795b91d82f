/**
 * The chaos harness: many simulated engines run a seeded plan (chaos/plan.ts) against the real
 * store on DynamoDB Local and the real services, concurrently, while faults are injected: store
 * writes that fail before or after they apply (a crash kills the "container": its store calls stop
 * and the next operation runs in a fresh one, with new caches and a new id factory), summarizer
 * errors, throws and timeouts, duplicated and concurrent event deliveries, duplicated appends.
 * After every operation it checks the invariants of the process it touched; at the end it lets
 * leases expire, rolls every process forward and checks everything again, plus that nothing the
 * engines saw acknowledged was lost or stored twice, that the replay (composeContext and GET
 * context over the HTTP app) is the newest OK summary plus the active messages, that events and
 * inbox items are consistent, and that no process is left blocked.
 *
 * Used by `npm run chaos` (scripts/chaos.ts) and test/integration/chaos.test.ts.
 */
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { createDynamoStore, TRANSACTION_LIMIT } from "../../core/adapters/dynamodb/store.js";
import { silentLog } from "../../core/adapters/log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { AppError } from "../../core/domain/errors.js";
import type { CompactionResult, Memory, Message } from "../../core/domain/model.js";
import type { AppendMessageBody } from "../../core/adapters/http/schemas.js";
import type { Tunables } from "../../core/domain/tunables.js";
import type { DomainEvent } from "../../core/ports/events.js";
import type { ActiveView, ProcessKey, Store } from "../../core/ports/store.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction.js";
import { compactRange } from "../../core/services/range-compaction.js";
import { settledView } from "../../core/services/settle.js";
import { composeContext } from "../../core/services/context.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import {
  answerInboxItem,
  handleInboxAnswered,
  handlePlanCompleted,
  offerId,
} from "../../core/services/inbox.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { revertMemory } from "../../core/services/revert.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { EVENTS } from "../../core/domain/events.js";
import { handleCompactionRequested } from "../../core/services/worker.js";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { staticKeyResolver } from "../../core/adapters/http/auth.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { createFaultyStore, InjectedFault, type Fault } from "../faulty-store.js";
import { findViolations, readAll, readAllMessages, type Snapshot } from "../invariants.js";
import {
  ack,
  ackedIds,
  activeSetViolations,
  anchorViolations,
  emptyLedger,
  expectedBlock,
  expectedSummary,
  keyString,
  ledgerViolations,
  memoryRuleViolations,
  replayViolations,
  toolGroupViolations,
  type AppendLedger,
} from "./checks.js";
import {
  CHAOS_TENANTS,
  NONCE_TAG,
  planChaos,
  type BurstMember,
  type ChaosPlan,
  type EnginePlan,
  type MessageDraft,
  type OpPlan,
  type OpSpec,
  type Prompt,
  type StoreFaultPlan,
  type SummarizerOutcome,
  type SummarizerStep,
} from "./plan.js";
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
  /** Replaces the real store under test (the harness's own test breaks it on purpose). */
  wrapStore?: (store: Store) => Store;
  /**
   * `inline` (default): turns summarize in the request, so the plan's faults meet every step of
   * the commit protocol. `background`: turns queue folds and commit prepared ones; the harness
   * delivers CompactionRequested to the worker (twice, late, crashing before and after it stores
   * the prepared summary) between operations.
   */
  execution?: "inline" | "background";
}

export interface ChaosReport {
  seed: number;
  turns: number;
  engines: number;
  planDigest: string;
  tableName: string;
  /** Calls into the services: planned operations, burst members, retries, event deliveries. */
  operations: number;
  /** Faults that actually fired: store faults + summarizer faults + duplicated deliveries/appends. */
  faults: number;
  faultsByKind: Record<string, number>;
  /** Acknowledged CompactionRequested deliveries by outcome (prepared, committed, failed, skipped). */
  worker: Record<string, number>;
  crashes: number;
  restarts: number;
  retries: number;
  /**
   * Read back from the store at the end: OK memories by mode (SOFT, HARD, EMERGENCY, RANGE), FAILED
   * rows, memories whose archives did not fit one transaction (rolled forward). `backedOff`:
   * compaction calls that found a lease or a newer version and paid for no summary.
   */
  compactions: {
    committed: number;
    byMode: Record<string, number>;
    failedRows: number;
    rolledForward: number;
    backedOff: number;
    /** Background folds left at the end, by status (QUEUED, PREPARED, DISCARDED). */
    folds: Record<string, number>;
    /** Committed summaries that were prepared by the worker and committed by a turn without a model call. */
    preparedUsed: number;
  };
  /** `nothingLeft`: accepted offers whose range had already been folded by other compactions. */
  offers: { created: number; accepted: number; declined: number; rangeCompacted: number; nothingLeft: number; deadLettered: number };
  /** PATCHes that changed a strength, PATCHes refused with message.archived, reverts that committed. */
  controls: { pinned: number; unpinned: number; refusedArchived: number; reverted: number };
  violations: string[];
  durationMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TENANT_KEYS: Record<string, string> = { [CHAOS_TENANTS[0]]: "chaos-key-a", [CHAOS_TENANTS[1]]: "chaos-key-b" };
/** A prompt well below every threshold: the call only settles the process. */
const QUIET = { model: { contextWindow: 100_000 }, prompt: { tokens: 0 } } as const;

interface Container {
  id: string;
  deps: ServiceDeps;
}

interface PublishedEvent extends DomainEvent {
  container: string;
  /** Handler deliveries that returned normally (InboxItemAnswered and CompactionRequested). */
  delivered: number;
}

interface OfferRecord {
  tenantId: string;
  processId: string;
  itemId: string;
  answered: "ACCEPTED" | "DECLINED" | null;
  /** What each acknowledged delivery of InboxItemAnswered returned. */
  outcomes: string[];
}

type Attempt<T> = { ok: true; value: T; dead: boolean } | { ok: false; error: unknown; dead: boolean };

/** Runs the plan of `options.seed` and returns what happened, including every violation found. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const plan = planChaos({ seed: options.seed, turns: options.turns, ...(options.engines ? { engines: options.engines } : {}), ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) });
  const tableName = options.tableName ?? `chaos-${plan.seed}-${Date.now().toString(36)}`;
  const client = createDocumentClient({ endpoint: options.endpoint });
  await createTable(client, tableName);
  const real = createDynamoStore({ client, tableName });
  const stats: Stats = {
    operations: 0,
    crashes: 0,
    restarts: 0,
    retries: 0,
    faultsByKind: {},
    worker: {},
    compactions: { committed: 0, byMode: {}, failedRows: 0, rolledForward: 0, backedOff: 0, folds: {}, preparedUsed: 0 },
    offers: { created: 0, accepted: 0, declined: 0, rangeCompacted: 0, nothingLeft: 0, deadLettered: 0 },
    controls: { pinned: 0, unpinned: 0, refusedArchived: 0, reverted: 0 },
    violations: new Set(),
  };
  await executePlan(plan, options.wrapStore ? options.wrapStore(real) : real, options, stats);
  return {
    seed: plan.seed,
    turns: plan.turns,
    engines: plan.engines.length,
    planDigest: plan.digest,
    tableName,
    operations: stats.operations,
    faults: Object.values(stats.faultsByKind).reduce((a, b) => a + b, 0),
    faultsByKind: stats.faultsByKind,
    worker: stats.worker,
    crashes: stats.crashes,
    restarts: stats.restarts,
    retries: stats.retries,
    compactions: stats.compactions,
    offers: stats.offers,
    controls: stats.controls,
    violations: [...stats.violations],
    durationMs: Date.now() - started,
  };
}

/** The report as text; the last line is exactly `chaos: seed S, N operations, F faults, V violations`. */
export function formatReport(r: ChaosReport): string[] {
  const kinds = Object.entries(r.faultsByKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}=${n}`)
    .join(" ");
  return [
    ...r.violations.slice(0, 50).map((v) => `VIOLATION ${v}`),
    ...(r.violations.length > 50 ? [`... and ${r.violations.length - 50} more violations`] : []),
    `plan ${r.planDigest}: ${r.turns} planned operations over ${r.engines} engines, table ${r.tableName}, ${(r.durationMs / 1000).toFixed(1)} s`,
    `compactions: ${r.compactions.committed} committed (${Object.entries(r.compactions.byMode)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([m, n]) => `${m} ${n}`)
      .join(", ")}; ${r.compactions.rolledForward} rolled forward), ${r.compactions.failedRows} FAILED rows, ${r.compactions.backedOff} calls backed off`,
    `offers: ${r.offers.created} created, ${r.offers.accepted} accepted, ${r.offers.declined} declined, ${r.offers.rangeCompacted} range-compacted, ${r.offers.nothingLeft} found their range already folded, ${r.offers.deadLettered} dead-lettered`,
    `controls: ${r.controls.pinned} pinned, ${r.controls.unpinned} unpinned, ${r.controls.refusedArchived} refused (archived), ${r.controls.reverted} reverted`,
    `crashes: ${r.crashes} (containers restarted: ${r.restarts}), retries: ${r.retries}`,
    `faults: ${kinds}`,
    `chaos: seed ${r.seed}, ${r.operations} operations, ${r.faults} faults, ${r.violations.length} violations`,
  ];
}

/** Counters the report is made of. */
interface Stats {
  operations: number;
  crashes: number;
  restarts: number;
  retries: number;
  faultsByKind: Record<string, number>;
  worker: Record<string, number>;
  compactions: ChaosReport["compactions"];
  offers: ChaosReport["offers"];
  controls: ChaosReport["controls"];
  violations: Set<string>;
}

/** One simulated engine: its process, what it saw acknowledged, and its current container. */
interface Engine {
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
}

/** A planned store fault, or one the harness adds for the worker (storeFold: the prepared summary). */
type HarnessFault = Omit<StoreFaultPlan, "method"> & { method: StoreFaultPlan["method"] | "storeFold" };
type OpFaults = { fault: HarnessFault | null; summarizer: readonly SummarizerStep[] };
const NO_FAULTS: OpFaults = { fault: null, summarizer: [] };

/** An error the service raised on purpose so the event is delivered again (see inbox.ts). */
const isRetryable = (e: unknown) => e instanceof AppError && e.code === "compaction.retry_later";

function describe(e: unknown): string {
  if (e instanceof AppError) return `${e.code}: ${e.message}`;
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

function toFault(plan: HarnessFault): Fault {
  if (plan.method === "markArchived") {
    // The service reaches markArchived inside a roll-forward: crash half way through one.
    return {
      method: "finishPendingArchive",
      when: "before",
      nth: plan.nth,
      crash: true,
      beforeThrow: async (inner, args) => {
        const [key, memoryId] = args as [ProcessKey, string];
        const memory = await inner.getMemory(key, memoryId);
        if (memory) await inner.markArchived(key, memory.sourceRefs.slice(0, Math.ceil(memory.sourceRefs.length / 2)), memoryId);
      },
    };
  }
  return { method: plan.method, when: plan.when, nth: plan.nth, crash: plan.crash };
}

/** Fault counters are keyed by what the plan asked for (markArchived: the mid-roll-forward crash). */
const faultLabel = (plan: HarnessFault) => (plan.method === "markArchived" ? "store:markArchived(mid-roll-forward)" : `store:${plan.method}:${plan.when}`);

const detailOf = (e: DomainEvent) => e.detail as { tenantId: string; itemId: string; processId: string; memoryId: string };

/**
 * Runs one plan against `inner` and fills `stats`. Everything an engine does goes through
 * {@link attempt}: per-call deps over the engine's container, with the call's planned faults.
 */
async function executePlan(plan: ChaosPlan, inner: Store, options: ChaosOptions, stats: Stats): Promise<void> {
  const leaseMs = plan.leaseMs;
  const events: PublishedEvent[] = [];
  const offers = new Map<string, OfferRecord>();
  const tunables = new Map<string, Tunables>();
  let containers = 0;

  const count = (kind: string, n = 1) => void (stats.faultsByKind[kind] = (stats.faultsByKind[kind] ?? 0) + n);
  const violate = (list: readonly string[]) => list.forEach((v) => stats.violations.add(v));
  const where = (e: Engine) => keyString(e.key);

  /** A new "Lambda container": its own deps (caches, id factory), publishing into the harness. */
  const newContainer = (): Container => {
    const id = `c${++containers}`;
    const deps = createDeps({
      // The worker does not wait for a lease here: the harness redelivers, like Lambda's retries.
      env: {
        COMPACTION_LEASE_MS: String(leaseMs),
        COMPACTION_EXECUTION: options.execution ?? "inline",
        COMPACTION_LEASE_WAIT_MS: "0",
        // Background: prepare from the plan's SOFT prompts (0.5) on, so the worker has work on most turns.
        ...(options.execution === "background" ? { COMPACTION_PREPARE_THRESHOLD: "0.45", COMPACTION_KEEP_RECENT: "4" } : {}),
      },
      store: inner,
      events: { publish: async (event) => void events.push({ ...event, container: id, delivered: 0 }) },
      metrics: createRecordingMetrics(),
      log: silentLog,
      summarizerFactory: async () => createChaosSummarizer({ steps: [], leaseMs }),
    });
    return { id, deps };
  };

  const restart = (e: Engine, which: Container) => {
    stats.restarts++;
    const fresh = newContainer();
    if (which === e.container) e.container = fresh;
    const i = e.siblings.indexOf(which);
    if (i >= 0) e.siblings[i] = fresh;
  };

  const sibling = (e: Engine, index: number): Container => (index === 0 ? e.container : (e.siblings[index - 1] ??= newContainer()));

  const body = (m: MessageDraft, extra: Partial<AppendMessageBody> = {}): AppendMessageBody => ({
    role: m.role,
    content: m.content,
    tags: [...m.tags, `${NONCE_TAG}${m.nonce}`],
    ...(m.idem ? { idempotencyKey: `k-${m.nonce}` } : {}),
    ...extra,
  });

  /**
   * One call into the services with per-call deps: the container's caches and ids, a store that
   * injects the planned fault, and a summarizer that plays the planned outcomes. A crash (the
   * store died) restarts the container; the call's own `finally` blocks could not write either.
   */
  async function attempt<T>(e: Engine, faults: OpFaults, fn: (deps: ServiceDeps) => Promise<T>, container = e.container): Promise<Attempt<T>> {
    stats.operations++;
    const faulty = createFaultyStore(inner);
    if (faults.fault) faulty.inject(toFault(faults.fault));
    const summarizer = createChaosSummarizer({ steps: faults.summarizer, leaseMs, onFault: (o: SummarizerOutcome) => count(`summarizer:${o}`) });
    const deps: ServiceDeps = { ...container.deps, store: faulty, summarizer: async () => summarizer };
    let result: Attempt<T>;
    try {
      result = { ok: true, value: await fn(deps), dead: false };
    } catch (error) {
      result = { ok: false, error, dead: false };
    }
    if (faulty.fired.length > 0 && faults.fault) count(faultLabel(faults.fault));
    if (faulty.dead) {
      result.dead = true;
      stats.crashes++;
      restart(e, container);
    }
    return result;
  }

  /** Records an error that no injected fault explains. */
  const unexpected = (e: Engine, what: string, error: unknown) => {
    if (error instanceof InjectedFault) return;
    if (error instanceof AppError && (error.code === "inbox.already_answered" || isRetryable(error))) return;
    violate([`${where(e)}: ${what} failed without an injected fault: ${describe(error)}`]);
  };

  /** Runs `fn` with the planned faults; when that fails, once more with none (what an engine retries). */
  async function withRetry<T>(e: Engine, faults: OpFaults, what: string, retriable: boolean, fn: (deps: ServiceDeps) => Promise<T>, container?: Container): Promise<T | undefined> {
    const first = await attempt(e, faults, fn, container ?? e.container);
    if (first.ok) return first.value;
    unexpected(e, what, first.error);
    if (!retriable) return undefined;
    stats.retries++;
    const again = await attempt(e, NO_FAULTS, fn, first.dead || !container ? e.container : container);
    if (again.ok) return again.value;
    unexpected(e, `${what} (retry)`, again.error);
    return undefined;
  }

  /** The pure invariants over one snapshot (settled: no crash may still be unfinished). */
  const snapshotViolations = (e: Engine, snapshot: Snapshot, settled: boolean) => [
    ...findViolations(snapshot, { appendedIds: ackedIds(e.ledger), settled, mustStayActive: [...e.pinned] }),
    ...ledgerViolations(snapshot, e.ledger),
    ...memoryRuleViolations(snapshot, e.reweighed),
    ...toolGroupViolations(snapshot),
  ];

  const request = (prompt: Prompt): Pick<CompactionRequest, "model" | "prompt"> => ({
    model: { contextWindow: prompt.contextWindow },
    ...(prompt.ratio === null ? {} : { prompt: { tokens: Math.round(prompt.ratio * prompt.contextWindow) } }),
  });

  /** The active view an op starts from, when nothing else can write meanwhile and nothing is pending. */
  const viewBefore = async (e: Engine, concurrent: boolean): Promise<ActiveView | null> => {
    if (concurrent) return null;
    const view = await inner.activeView(e.key);
    return view && view.state.pendingArchive === null ? view : null;
  };

  /** Counts a compaction result and checks its anchor against the view it started from. */
  async function sawCompaction(e: Engine, result: CompactionResult, before: ActiveView | null, extra: Message | null) {
    if (result.memoryId) e.memories.add(result.memoryId);
    if (!result.compacted) {
      if (result.reason && /in_progress|concurrent|conflict/.test(result.reason)) stats.compactions.backedOff++;
      return;
    }
    const memory = result.memoryId ? await inner.getMemory(e.key, result.memoryId) : null;
    if (!memory) return violate([`${where(e)}: compaction reported memory ${result.memoryId}, which does not exist`]);
    if (before && result.mode !== "NONE") {
      const messages = extra && !before.messages.some((m) => m.id === extra.id) ? [...before.messages, extra] : before.messages;
      violate(anchorViolations(e.key, messages, memory, result.mode, tunables.get(e.key.tenantId)!));
    }
  }

  async function runSimple(e: Engine, faults: OpFaults, spec: BurstMember["spec"], concurrent: boolean, container?: Container) {
    switch (spec.kind) {
      case "append": {
        const m = spec.message;
        e.ledger.sent.add(m.nonce);
        const out = await withRetry(e, faults, "append", m.idem && !concurrent, (deps) => appendMessage(deps, e.key, body(m)), container);
        if (out) ack(e.ledger, m.nonce, out.message.id);
        if (spec.sendTwice && m.idem) {
          count("duplicate-append");
          const again = await attempt(e, NO_FAULTS, (deps) => appendMessage(deps, e.key, body(m)));
          if (again.ok) ack(e.ledger, m.nonce, again.value.message.id);
          else unexpected(e, "duplicate append", again.error);
        }
        return;
      }
      case "turn": {
        const m = spec.message;
        if (m) e.ledger.sent.add(m.nonce);
        const before = await viewBefore(e, concurrent);
        const turn = { ...request(spec.prompt), ...(m ? { message: body(m) } : {}) };
        const out = await withRetry(e, faults, "turn", !concurrent && (m === null || m.idem), (deps) => runTurn(deps, e.key, turn), container);
        if (!out) return;
        let mine: Message | null = null;
        if (m) {
          const tag = `${NONCE_TAG}${m.nonce}`;
          mine = out.messages.find((x) => x.tags.includes(tag)) ?? null;
          if (!mine) {
            const stored = (await readAllMessages(inner, e.key)).find((x) => x.tags.includes(tag));
            if (!stored) violate([`${where(e)}: the message of an acknowledged turn (${m.nonce}) is not stored`]);
            // The turn's own message is the newest: the triggering turn and the anchor keep it active.
            else if (!concurrent) violate([`${where(e)}: the turn's own message ${stored.id} is not in the active messages it returned`]);
            mine = stored ?? null;
          }
          if (mine) ack(e.ledger, m.nonce, mine.id);
        }
        return sawCompaction(e, out.compaction, before, mine);
      }
      case "compact": {
        const before = await viewBefore(e, concurrent);
        const req: CompactionRequest = {
          ...request(spec.prompt),
          ...(spec.force ? { force: spec.force } : {}),
          ...(spec.instructions ? { instructions: "Keep every decision and every number." } : {}),
        };
        const out = await withRetry(e, faults, "compaction", !concurrent, (deps) => compactIfNeeded(deps, e.key, req), container);
        if (out) await sawCompaction(e, out, before, null);
        return;
      }
      case "range": {
        const history = await readAllMessages(inner, e.key);
        if (history.length === 0) return;
        const at = (f: number) => history[Math.floor(f * (history.length - 1))]!.createdAt;
        const range = { from: at(spec.fromFrac), to: at(spec.toFrac), topicLabel: spec.topicLabel };
        const out = await withRetry(e, faults, "range compaction", !concurrent, (deps) => compactRange(deps, e.key, range), container);
        if (out?.memoryId) e.memories.add(out.memoryId);
        else if (out?.reason && /in_progress|concurrent|conflict/.test(out.reason)) stats.compactions.backedOff++;
        return;
      }
      case "context": {
        const out = await withRetry(
          e,
          faults,
          "context",
          !concurrent,
          async (deps) => {
            const view = await settledView(deps, e.key);
            return { view, context: await composeContext(deps, e.key, view) };
          },
          container,
        );
        if (!out || concurrent) return;
        // A quiet process: the replay is the newest OK summary and exactly the active messages.
        // (A worker's parent belongs to another engine that may be compacting: compare the summary only.)
        const memories = await inner.listMemories(e.key);
        const expected = { block: e.plan.parentProcessId ? out.context.block : await expectedBlock(inner, e.key, memories), summary: expectedSummary(memories) };
        violate(replayViolations(e.key, out.context, expected, "context"));
        violate(activeSetViolations(e.key, out.view.messages, await readAllMessages(inner, e.key), "settled view"));
        return;
      }
    }
  }

  async function runGroup(e: Engine, op: OpPlan, spec: Extract<OpSpec, { kind: "group" }>) {
    const calls = spec.results.map((r, k) => ({ id: `tc-${r.nonce}`, name: `tool_${k}`, arguments: JSON.stringify({ k }) }));
    for (const m of [spec.call, ...spec.results]) e.ledger.sent.add(m.nonce);
    const out = await withRetry(e, op, "tool group", true, async (deps) => {
      const ids: Array<[string, string]> = [];
      const first = await appendMessage(deps, e.key, body(spec.call, { toolCalls: calls }));
      ids.push([spec.call.nonce, first.message.id]);
      for (const [k, r] of spec.results.entries()) {
        const res = await appendMessage(deps, e.key, body(r, { toolCallId: calls[k]!.id }));
        ids.push([r.nonce, res.message.id]);
      }
      return ids;
    });
    for (const [nonce, id] of out ?? []) ack(e.ledger, nonce, id);
  }

  async function runFlood(e: Engine, spec: Extract<OpSpec, { kind: "flood" }>) {
    const queue = [...spec.messages];
    const worker = async () => {
      for (let m = queue.shift(); m; m = queue.shift()) {
        const draft = m;
        e.ledger.sent.add(draft.nonce);
        const r = await attempt(e, NO_FAULTS, (deps) => appendMessage(deps, e.key, body(draft)));
        if (r.ok) ack(e.ledger, draft.nonce, r.value.message.id);
        else unexpected(e, "flood append", r.error);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  }

  async function runReplayArchive(e: Engine, op: OpPlan, spec: Extract<OpSpec, { kind: "replayArchive" }>) {
    const ok = (await inner.listMemories(e.key)).filter((m) => m.status === "OK");
    if (ok.length === 0) return;
    const memory = ok[Math.floor(spec.memoryFrac * ok.length)]!;
    const pending = (await inner.getProcess(e.key))?.pendingArchive === memory.id;
    // A duplicated roll-forward: markArchived again with the same memory must never re-point a message.
    const out = await withRetry(e, op, "replayed roll-forward", true, (deps) => deps.store.markArchived(e.key, memory.sourceRefs, memory.id));
    if (out && !pending && out.archived.length > 0) {
      violate([`${where(e)}: a replayed roll-forward of settled memory ${memory.id} archived ${out.archived.length} more messages`]);
    }
  }

  /** Pins or unpins a message; an archived one must answer 409 message.archived and stay unchanged. */
  async function runPin(e: Engine, spec: Extract<OpSpec, { kind: "pin" }>) {
    const history = await readAllMessages(inner, e.key);
    if (history.length === 0) return;
    const target = history[Math.floor(spec.messageFrac * (history.length - 1))]!;
    const out = await attempt(e, NO_FAULTS, (deps) => setMessageStrength(deps, e.key, target.id, spec.strength, (k) => settledView(deps, k)));
    if (out.ok) {
      stats.controls[spec.strength ? "pinned" : "unpinned"]++;
      e.reweighed.add(target.id);
      if (spec.strength) e.pinned.add(target.id);
      else e.pinned.delete(target.id);
      const stored = (await inner.getMessages(e.key, [target.id]))[0];
      if (stored?.archivedInMemoryId) violate([`${where(e)}: ${target.id} was ${spec.strength ? "pinned" : "unpinned"} but is archived into ${stored.archivedInMemoryId}`]);
    } else if (out.error instanceof AppError && out.error.code === "message.archived") {
      stats.controls.refusedArchived++;
      if (target.archivedInMemoryId === null && !(await inner.getMessages(e.key, [target.id]))[0]?.archivedInMemoryId) {
        violate([`${where(e)}: PATCH of active message ${target.id} answered message.archived`]);
      }
    } else unexpected(e, "pin", out.error);
  }

  /** Reverts the active summary; losing to nothing else (ops of one engine run one at a time) is a violation. */
  async function runRevert(e: Engine, op: OpPlan) {
    const active = expectedSummary(await inner.listMemories(e.key));
    if (!active) return;
    const out = await attempt(e, op, (deps) => revertMemory(deps, e.key, active.id));
    if (out.ok) {
      stats.controls.reverted++;
      return;
    }
    // A crash mid-revert may have committed it; a held lease (left by a crash) makes it busy.
    if (out.error instanceof AppError && ["memory.reverted", "process.busy"].includes(out.error.code)) return;
    unexpected(e, "revert", out.error);
  }

  async function runPlanCompletion(e: Engine, op: OpPlan, spec: Extract<OpSpec, { kind: "plan" }>) {
    const drafts = [spec.marker, ...spec.steps];
    for (const m of drafts) e.ledger.sent.add(m.nonce);
    const run = async (deps: ServiceDeps) => {
      for (const m of drafts) {
        const out = await appendMessage(deps, e.key, body(m));
        ack(e.ledger, m.nonce, out.message.id);
      }
      await sleep(2); // completedAt after the last step, in another millisecond
      const detail = { tenantId: e.key.tenantId, processId: e.key.processId, planId: spec.planId, topicLabel: spec.topicLabel, completedAt: new Date().toISOString() };
      if (spec.copies > 1) count("duplicate-delivery", spec.copies - 1);
      const deliver = () => handlePlanCompleted(deps, detail);
      const results: Awaited<ReturnType<typeof deliver>>[] = [];
      if (spec.concurrentCopies) results.push(...(await Promise.all(Array.from({ length: spec.copies }, deliver))));
      else for (let i = 0; i < spec.copies; i++) results.push(await deliver());
      const offered = results.filter((r) => r.offered).length;
      if (offered > 1) violate([`${where(e)}: one PlanCompleted made ${offered} offers`]);
      const item = results.find((r) => r.item)?.item;
      if (!item) return;
      const k = `${e.key.tenantId}/${item.id}`;
      if (item.id !== offerId(e.key.processId, spec.planId)) violate([`${k}: the offer id is not derived from (process, plan)`]);
      if (!offers.has(k)) {
        offers.set(k, { tenantId: e.key.tenantId, processId: e.key.processId, itemId: item.id, answered: null, outcomes: [] });
        stats.offers.created++;
      }
      const record = offers.get(k)!;
      if (record.answered !== null) return;
      try {
        const answered = await answerInboxItem(deps, e.key.tenantId, item.id, spec.accept);
        record.answered = answered.status === "ACCEPTED" ? "ACCEPTED" : "DECLINED";
        if (spec.accept) stats.offers.accepted++;
        else stats.offers.declined++;
      } catch (err) {
        if (!(err instanceof AppError && err.code === "inbox.already_answered")) throw err;
      }
      if (spec.answerTwice) {
        count("duplicate-answer");
        const second = await answerInboxItem(deps, e.key.tenantId, item.id, !spec.accept).then(
          () => null,
          (err: unknown) => err,
        );
        if (!(second instanceof AppError && second.code === "inbox.already_answered")) {
          violate([`${k}: a second answer was not refused with 409 (${describe(second)})`]);
        }
      }
    };
    // Appends meet an appendMessage fault; the range compaction of the answer meets the others.
    await withRetry(e, op.fault?.method === "appendMessage" ? op : NO_FAULTS, "plan completion", true, run);
    await deliverPending(e, op);
  }

  /** Delivers one published InboxItemAnswered event `deliveries` times, each redelivered on error. */
  async function deliverAnswer(e: Engine, event: PublishedEvent, op: OpPlan | null) {
    const record = offers.get(`${detailOf(event).tenantId}/${detailOf(event).itemId}`);
    const copies = op?.deliveries ?? 1;
    if (copies > 1) count("duplicate-delivery", copies - 1);
    const one = async (copy: number) => {
      // EventBridge + Lambda async: up to three attempts; a failed attempt is retried later.
      for (let n = 1; n <= 3; n++) {
        // The op's compaction fault (and summarizer outcomes) meet the first attempt of the first copy.
        const faults = copy === 0 && n === 1 && op && op.fault?.method !== "appendMessage" ? op : NO_FAULTS;
        const r = await attempt(e, faults, (deps) => handleInboxAnswered(deps, event.detail));
        if (r.ok) {
          event.delivered++;
          const out = r.value;
          // The range itself is folded by the worker: its job's outcome is the offer's.
          if (out?.reason === "compaction_queued" && out.memoryId && record) rangeJobs.set(out.memoryId, record);
          else settleOffer(record, out === null ? "skipped" : (out.reason ?? "no_reason"));
          return;
        }
        if (!(r.error instanceof InjectedFault) && !isRetryable(r.error)) {
          violate([`${where(e)}: InboxItemAnswered handler failed: ${describe(r.error)}`]);
        }
        await sleep(leaseMs + 20);
      }
    };
    if (op?.concurrentDeliveries) await Promise.all(Array.from({ length: copies }, (_, i) => one(i)));
    else for (let i = 0; i < copies; i++) await one(i);
  }

  /** Queued range jobs (fold ids) and the accepted offer each one folds. */
  const rangeJobs = new Map<string, OfferRecord>();
  const settleOffer = (record: OfferRecord | undefined, outcome: string) => {
    if (outcome === "compacted") stats.offers.rangeCompacted++;
    record?.outcomes.push(outcome);
  };

  let workerDeliveries = 0;
  /** Worker crashes that happened; the next one crashes before the store if even, after if odd. */
  let workerCrashes = 0;
  /**
   * Delivers one CompactionRequested to the worker `copies` times (a duplicate is concurrent when
   * the op says so), each redelivered on error. Every third delivery crashes its container, by
   * turns before and after the worker stores the prepared summary. The turn follows the crashes
   * that happened, not the deliveries: which delivery reaches the store depends on how the engines
   * interleave, and both sides must be hit whatever that order is.
   */
  async function deliverFold(e: Engine, event: PublishedEvent, op: OpPlan | null, copies: number) {
    if (copies > 1) count("duplicate-delivery", copies - 1);
    const one = async (copy: number) => {
      for (let n = 1; n <= 3; n++) {
        // A range job stores no prepared summary: the crash schedule counts the other jobs only.
        const k = event.detail.job === "range" ? 1 : ++workerDeliveries;
        const crash: OpFaults | null =
          copy === 0 && n === 1 && k % 3 === 0
            ? { fault: { method: "storeFold", when: workerCrashes % 2 ? "after" : "before", nth: 1, crash: true }, summarizer: [] }
            : null;
        const faults = crash ?? (copy === 0 && n === 1 && op && op.fault?.method !== "appendMessage" ? { fault: null, summarizer: op.summarizer } : NO_FAULTS);
        const r = await attempt(e, faults, (deps) => handleCompactionRequested(deps, event.detail));
        if (crash && r.dead) workerCrashes++;
        if (r.ok) {
          event.delivered++;
          const out = r.value;
          const outcome = "done" in out ? out.done : "skipped";
          stats.worker[outcome] = (stats.worker[outcome] ?? 0) + 1;
          const offer = out.foldId ? rangeJobs.get(out.foldId) : undefined;
          if (offer && "done" in out && out.done === "committed") {
            e.memories.add(out.foldId);
            settleOffer(offer, "compacted");
          } else if (offer && "skipped" in out && out.skipped === "nothing_in_range") settleOffer(offer, "nothing_in_range");
          return;
        }
        if (!(r.error instanceof InjectedFault) && !isRetryable(r.error)) {
          violate([`${where(e)}: CompactionRequested handler failed: ${describe(r.error)}`]);
        }
        await sleep(leaseMs + 20);
      }
    };
    if (op?.concurrentDeliveries) await Promise.all(Array.from({ length: copies }, (_, i) => one(i)));
    else for (let i = 0; i < copies; i++) await one(i);
  }

  /** The worker's share: the process's CompactionRequested events nobody handled yet, newest first (older ones arrive late). */
  async function deliverFolds(e: Engine, op: OpPlan | null = null) {
    const mine = events
      .filter((ev) => ev.detailType === EVENTS.CompactionRequested.detailType && ev.delivered === 0 && sameProcess(ev, e))
      .reverse();
    // Range jobs after the others: a range committed first would leave every older prepare job
    // stale, so the worker would never reach its prepared summary (where the crashes are planned).
    const ordered = [...mine.filter((ev) => ev.detail.job !== "range"), ...mine.filter((ev) => ev.detail.job === "range")];
    for (const event of ordered) await deliverFold(e, event, op, op?.deliveries ?? 1);
  }

  const sameProcess = (ev: PublishedEvent, e: Engine) => detailOf(ev).tenantId === e.key.tenantId && detailOf(ev).processId === e.key.processId;

  /** Delivers every InboxItemAnswered of the engine's process that no handler acknowledged yet, then the range jobs they queued. */
  async function deliverPending(e: Engine, op: OpPlan | null = null) {
    if (options.execution === "background") await deliverFolds(e, op);
    const mine = events.filter((ev) => {
      const d = detailOf(ev);
      return (
        ev.source === EVENTS.InboxItemAnswered.source &&
        ev.detailType === "InboxItemAnswered" &&
        ev.delivered === 0 &&
        d.tenantId === e.key.tenantId &&
        offers.get(`${d.tenantId}/${d.itemId}`)?.processId === e.key.processId
      );
    });
    for (const event of mine) await deliverAnswer(e, event, op);
    // Range jobs run in the worker in both modes; in the background mode they also meet the
    // prepared folds and manual compactions of later ops, delivered late.
    if (mine.length > 0 && options.execution !== "background") await deliverFolds(e, op);
  }

  async function runOp(e: Engine, op: OpPlan) {
    const spec = op.spec;
    switch (spec.kind) {
      case "append":
      case "turn":
      case "compact":
      case "range":
      case "context":
        return runSimple(e, op, spec, false);
      case "group":
        return runGroup(e, op, spec);
      case "plan":
        return runPlanCompletion(e, op, spec);
      case "replayArchive":
        return runReplayArchive(e, op, spec);
      case "flood":
        return runFlood(e, spec);
      case "restart":
        return restart(e, e.container);
      case "pin":
        return runPin(e, spec);
      case "revert":
        return runRevert(e, op);
      case "burst":
        await Promise.all(spec.members.map((m) => runSimple(e, m, m.spec, true, sibling(e, m.container))));
        return;
    }
  }

  // ---- the run ------------------------------------------------------------------------------------

  const setup = newContainer();
  // The second tenant compacts with other tunables (saved once, like an admin would).
  for (const [tenantId, settings] of Object.entries(plan.tenantSettings)) {
    await setup.deps.tunables.save(tenantId, undefined, settings, new Date().toISOString());
  }
  const engines: Engine[] = plan.engines.map((p) => ({
    plan: p,
    key: { tenantId: p.tenantId, processId: p.processId },
    ledger: emptyLedger(),
    memories: new Set<string>(),
    container: newContainer(),
    siblings: [],
    opsRun: 0,
    pinned: new Set<string>(),
    reweighed: new Set<string>(),
  }));
  // Parents first: the workers' context shows them.
  for (const e of [...engines].sort((a, b) => Number(a.plan.parentProcessId !== null) - Number(b.plan.parentProcessId !== null))) {
    await upsertProcess(setup.deps, e.key.tenantId, e.key.processId, {
      projectId: e.plan.projectId,
      name: `engine ${e.plan.index}`,
      recipe: "chaos",
      engine: "simulated",
      title: `Chaos engine ${e.plan.index}`,
      allowsCrossProjectSpawn: e.plan.allowsCrossProjectSpawn,
      ...(e.plan.parentProcessId ? { parentProcessId: e.plan.parentProcessId } : {}),
    });
    for (const m of e.plan.seed) {
      stats.operations++;
      ack(e.ledger, m.nonce, (await appendMessage(setup.deps, e.key, body(m))).message.id);
    }
  }
  for (const t of CHAOS_TENANTS) tunables.set(t, await newContainer().deps.tunables.forProcess(t));

  options.progress?.(`chaos: plan ${plan.digest}, ${engines.length} engines, ${plan.turns} planned operations`);
  await Promise.all(
    engines.map(async (e) => {
      for (const op of e.plan.ops) {
        await runOp(e, op);
        // The worker gets the requests after every other op: the rest arrive late, after another op
        // (a turn, a forced compaction, a range offer) may have raced or outdated them.
        if (options.execution === "background" && e.opsRun % 2 === 1) await deliverFolds(e, op);
        if (++e.opsRun % (options.checkEvery ?? 1) === 0) violate(snapshotViolations(e, await readAll(inner, e.key), false));
        if (e.opsRun % 50 === 0) options.progress?.(`  ${where(e)}: ${e.opsRun}/${e.plan.ops.length} operations`);
      }
    }),
  );

  // ---- the end: leases expire, everything is delivered and settled, then checked ------------------

  await sleep(leaseMs + 50);
  for (const e of engines) await deliverPending(e);
  if (options.execution === "background") {
    // The range jobs the last answers queued.
    for (const e of engines) await deliverFolds(e);
    // Late duplicates of every request the worker already handled change nothing.
    for (const e of engines) {
      for (const ev of events.filter((x) => x.detailType === EVENTS.CompactionRequested.detailType && sameProcess(x, e))) {
        const before = await readAll(inner, e.key);
        const r = await attempt(e, NO_FAULTS, (deps) => handleCompactionRequested(deps, ev.detail));
        if (!r.ok) continue; // a fold still waiting for its lease; settled below
        if ("done" in r.value && r.value.done === "committed" && ev.delivered > 0) violate([`${where(e)}: a late CompactionRequested committed fold ${r.value.foldId} again`]);
        if ("skipped" in r.value && JSON.stringify(await readAll(inner, e.key)) !== JSON.stringify(before) && r.value.skipped.startsWith("fold is")) {
          violate([`${where(e)}: a late CompactionRequested for a handled fold changed the process`]);
        }
        ev.delivered++;
      }
    }
  }
  const clean = newContainer();
  // A turn with nothing to add rolls a pending archive forward, like an engine's next call.
  await Promise.all(
    engines.map(async (e) => {
      stats.operations++;
      await runTurn(clean.deps, e.key, QUIET).catch((err: unknown) => violate([`${where(e)}: the settling turn failed: ${describe(err)}`]));
    }),
  );
  await checkAll("final");
  // Liveness: with the leases expired, a forced compaction is never blocked by what crashed.
  await Promise.all(
    engines.map(async (e) => {
      stats.operations++;
      try {
        const r = await compactIfNeeded(clean.deps, e.key, { model: { contextWindow: 100_000 }, force: "EMERGENCY" });
        if (r.memoryId) e.memories.add(r.memoryId);
        if (!r.compacted && !["keep_recent", "nothing_eligible"].includes(r.reason ?? "")) {
          violate([`${where(e)}: liveness: a forced compaction after recovery did not run (${r.reason})`]);
        }
      } catch (err) {
        violate([`${where(e)}: liveness: the forced compaction failed: ${describe(err)}`]);
      }
    }),
  );
  await checkAll("after liveness");
  await checkGlobal();

  /** Per process: every invariant (settled), the replay three ways, and the active set. */
  async function checkAll(label: string) {
    const app = createHttpApp({
      deps: clean.deps,
      resolveTenant: staticKeyResolver(new Map(Object.entries(TENANT_KEYS).map(([t, k]) => [k, t]))),
      groups: allRouteGroups,
    });
    for (const e of engines) {
      const key = e.key;
      const snapshot = await readAll(inner, key);
      violate(snapshotViolations(e, snapshot, true));
      const lease = snapshot.state?.lease;
      if (lease && Date.parse(lease.until) > Date.now()) violate([`${where(e)}: ${label}: a live lease is left (${lease.owner})`]);
      for (const id of e.memories) {
        if (!snapshot.memories.some((m) => m.id === id)) violate([`${where(e)}: memory ${id} the engine saw is gone`]);
      }
      const expected = { block: await expectedBlock(inner, key, snapshot.memories), summary: expectedSummary(snapshot.memories) };
      try {
        const composed = await composeContext(clean.deps, key, await settledView(clean.deps, key));
        violate(replayViolations(key, composed, expected, `${label} composeContext`));
        const turn = await runTurn(clean.deps, key, QUIET);
        violate(replayViolations(key, turn.context, expected, `${label} turn context`));
        violate(activeSetViolations(key, turn.messages, snapshot.messages, `${label} turn messages`));
        const auth = { headers: { authorization: `Bearer ${TENANT_KEYS[key.tenantId]}` } };
        const res = await app.request(`/v1/processes/${key.processId}/context`, auth);
        const got = (await res.json()) as { block: string; sections: Array<{ name: string; content: string }> };
        if (res.status !== 200) violate([`${where(e)}: ${label}: GET context answered ${res.status}`]);
        else violate(replayViolations(key, got, expected, `${label} GET context`));
        const active = await app.request(`/v1/processes/${key.processId}/messages?view=active&limit=1000`, auth);
        violate(activeSetViolations(key, ((await active.json()) as { items: Message[] }).items, snapshot.messages, `${label} GET messages?view=active`));
      } catch (err) {
        violate([`${where(e)}: ${label}: replay check failed: ${describe(err)}`]);
      }
    }
  }

  /** Events, inbox items and listings across processes and tenants. */
  async function checkGlobal() {
    const v: string[] = [];
    const memoryOf = new Map<string, Memory>();
    for (const e of engines) for (const m of await inner.listMemories(e.key)) memoryOf.set(`${where(e)}#${m.id}`, m);
    for (const m of memoryOf.values()) {
      if (m.status === "FAILED") {
        stats.compactions.failedRows++;
        continue;
      }
      if (m.status !== "OK") {
        stats.compactions.folds[m.status] = (stats.compactions.folds[m.status] ?? 0) + 1;
        continue;
      }
      if (m.metadata.producedBy === "prepared") stats.compactions.preparedUsed++;
      stats.compactions.committed++;
      const mode = m.metadata.mode ?? "?";
      stats.compactions.byMode[mode] = (stats.compactions.byMode[mode] ?? 0) + 1;
      // The commit's transaction holds the memory, META, the superseded summary and a range marker.
      const fixed = 2 + (m.metadata.supersededMemoryId ? 1 : 0) + (m.metadata.recompaction ? 1 : 0);
      if (m.sourceRefs.length > TRANSACTION_LIMIT - fixed) stats.compactions.rolledForward++;
    }
    const announced = new Map<string, number>();
    for (const ev of events) {
      const d = detailOf(ev);
      if (ev.detailType === "MemoryCompacted") {
        const k = `${d.tenantId}/${d.processId}#${d.memoryId}`;
        announced.set(k, (announced.get(k) ?? 0) + 1);
        // A summary undone later is REVERTED, never FAILED.
        if (!["OK", "REVERTED"].includes(memoryOf.get(k)?.status ?? "")) v.push(`MemoryCompacted names ${k}, which is not an OK or REVERTED memory`);
      }
      if (ev.detailType === "RecompactionOffered") {
        const k = `offer ${d.tenantId}/${d.itemId}`;
        announced.set(k, (announced.get(k) ?? 0) + 1);
      }
    }
    for (const [k, n] of announced) if (n > 1) v.push(`${k} was announced ${n} times`);

    for (const tenantId of CHAOS_TENANTS) {
      const own = engines.filter((e) => e.key.tenantId === tenantId).map((e) => e.key.processId).sort();
      const listed = (await clean.deps.store.listProcesses(tenantId, { limit: 100 })).items.map((p) => p.processId).sort();
      if (JSON.stringify(listed) !== JSON.stringify(own)) v.push(`${tenantId}: process listing [${listed}] is not its own processes [${own}]`);
      const inbox = await clean.deps.store.listInbox(tenantId, {});
      for (const item of inbox) {
        const record = offers.get(`${tenantId}/${item.id}`);
        if (!record || record.processId !== item.processId) v.push(`${tenantId}: inbox item ${item.id} was never offered to this tenant`);
        else if ((record.answered ?? "OPEN") !== item.status) v.push(`${tenantId}: inbox item ${item.id} is ${item.status}, answered ${record.answered ?? "never"}`);
      }
      for (const record of offers.values()) {
        if (record.tenantId === tenantId && !inbox.some((i) => i.id === record.itemId)) v.push(`${tenantId}: offer ${record.itemId} is gone`);
      }
    }
    // An accepted offer is folded, or found nothing left to fold; acknowledging its event without
    // either loses it. Deliveries that only ever failed are the platform's dead letters.
    for (const record of offers.values()) {
      if (record.answered !== "ACCEPTED" || record.outcomes.includes("compacted")) continue;
      if (record.outcomes.includes("nothing_in_range")) {
        stats.offers.nothingLeft++;
        continue;
      }
      if (record.outcomes.length > 0) {
        v.push(`accepted offer ${record.tenantId}/${record.itemId}: its event was acknowledged without a range compaction (${record.outcomes.join(", ")})`);
      } else stats.offers.deadLettered++;
    }
    violate(v);
  }
}
