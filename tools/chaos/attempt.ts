/**
 * How the harness calls a service: with per-call deps whose store injects the planned fault and
 * whose summarizer plays the planned outcomes, on the engine's current container. A crash (the
 * store died) restarts the container, as Lambda would; an error no injected fault explains is a
 * violation. Every operation, retry and event delivery goes through {@link attempt}, so faults
 * and crashes are counted in one place.
 */
import { AppError } from "../../core/domain/errors.js";
import { originalsExpiry } from "../../core/domain/retention.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { createFaultyStore, InjectedFault, type Fault } from "../faulty-store.js";
import { createStallingStore } from "../stalling-store.js";
import type { OpPlan, StallPlan, StoreFaultPlan, SummarizerOutcome, SummarizerStep } from "./plan.js";
import { deletionViolations } from "./deletion-checks.js";
import { countFault, violate } from "./report.js";
import { restart, sleep, where, type ChaosRun, type Container, type Engine } from "./run-state.js";
import { createChaosSummarizer, type ChaosSummarizerOptions } from "./summarizer.js";
import { foldsWithProvider } from "./native-messages.js";

/** A planned store fault, or one the harness adds for the worker (storeFold: the prepared summary) or a delete's erasure. */
export type HarnessFault = Omit<StoreFaultPlan, "method"> & { method: StoreFaultPlan["method"] | "storeFold" | "eraseItems" | "finishDeletion" };
export type OpFaults = {
  fault: HarnessFault | null;
  summarizer: readonly SummarizerStep[];
  /** A call held for a while (tools/chaos/README.md, "Stalls"). */
  stall?: StallPlan | undefined;
  /** How a detached stall waits (set by the engine loop, run-plan.ts); without it the stall sleeps `ms`. */
  hold?: (() => Promise<void>) | undefined;
};
export const NO_FAULTS: OpFaults = { fault: null, summarizer: [] };
/** A planned op as it runs: with the engine loop's hold when its stall detached it. */
export type RunningOp = OpPlan & Pick<OpFaults, "hold">;

/** `dead`: the call crashed its container (which is replaced by then). */
export type Attempt<T> = { ok: true; value: T; dead: boolean } | { ok: false; error: unknown; dead: boolean };

/** An error the service raised on purpose so the event is delivered again (see recompaction-offers.ts). */
export const isRetryable = (e: unknown) => e instanceof AppError && e.code === "compaction.retry_later";

export function describe(e: unknown): string {
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
        if (memory) await inner.markArchived(key, memory.sourceRefs.slice(0, Math.ceil(memory.sourceRefs.length / 2)), memoryId, originalsExpiry(memory));
      },
    };
  }
  return { method: plan.method, when: plan.when, nth: plan.nth, crash: plan.crash };
}

/** Fault counters are keyed by what the plan asked for (markArchived: the mid-roll-forward crash). */
const faultLabel = (plan: HarnessFault) => (plan.method === "markArchived" ? "store:markArchived(mid-roll-forward)" : `store:${plan.method}:${plan.when}`);

const stallLabel = (s: StallPlan) => (s.on === "summarizer" ? "stall:summarizer" : `stall:${s.method}:${s.at}`);

/**
 * The wait of a planned stall, counted when it begins. A stall holds one call only: the first
 * that reaches it, in the op's first attempt or in its retry (a crash before the held call would
 * otherwise leave the retry, not the stall, to meet it).
 */
function stallWait(run: ChaosRun, faults: OpFaults): (() => Promise<void>) | null {
  const stall = faults.stall;
  if (!stall || run.stallsBegun.has(stall)) return null;
  return async () => {
    if (run.stallsBegun.has(stall)) return;
    run.stallsBegun.add(stall);
    countFault(run.stats, stallLabel(stall));
    run.stats.stalls.held++;
    if (faults.hold) {
      run.stats.stalls.detached++;
      await faults.hold();
    } else await sleep(stall.ms);
  };
}

/**
 * The engine's summarizer: a provider fold's for the engines that fold with the provider, so
 * every fold of their processes (the harness's own forced ones too) writes a block.
 */
function engineSummarizer(run: ChaosRun, e: Engine, options: Partial<ChaosSummarizerOptions> = {}) {
  return createChaosSummarizer({
    steps: [],
    leaseMs: run.leaseMs,
    ...options,
    ...(foldsWithProvider(e) ? { blocks: { prefix: `chaos-block-e${e.plan.index}`, sent: e.blocks } } : {}),
  });
}

/** `deps` folding with the engine's summarizer (the harness's own forced folds of its processes). */
export const withEngineSummarizer = (run: ChaosRun, e: Engine, deps: ServiceDeps): ServiceDeps => ({ ...deps, summarizer: async () => engineSummarizer(run, e) });

/**
 * One call into the services with per-call deps: the container's caches and ids, a store that
 * injects the planned fault, and a summarizer that plays the planned outcomes. A crash (the
 * store died) restarts the container; the call's own `finally` blocks could not write either.
 */
export async function attempt<T>(
  run: ChaosRun,
  e: Engine,
  faults: OpFaults,
  fn: (deps: ServiceDeps) => Promise<T>,
  container = e.container,
): Promise<Attempt<T>> {
  run.stats.operations++;
  const wait = stallWait(run, faults);
  const stall = faults.stall;
  const faulty = createFaultyStore(wait && stall?.on === "store" ? createStallingStore(run.inner, stall, wait) : run.inner);
  if (faults.fault) faulty.inject(toFault(faults.fault));
  const summarizer = engineSummarizer(run, e, {
    steps: faults.summarizer,
    onFault: (o: SummarizerOutcome) => countFault(run.stats, `summarizer:${o}`),
    ...(wait && stall?.on === "summarizer" ? { hold: { nth: stall.nth, wait } } : {}),
  });
  const deps: ServiceDeps = { ...container.deps, store: faulty, summarizer: async () => summarizer };
  let result: Attempt<T>;
  try {
    result = { ok: true, value: await fn(deps), dead: false };
  } catch (error) {
    result = { ok: false, error, dead: false };
  }
  if (faulty.fired.length > 0 && faults.fault) countFault(run.stats, faultLabel(faults.fault));
  if (faulty.dead) {
    result.dead = true;
    run.stats.crashes++;
    restart(run, e, container);
  }
  // Nothing of a deleted process may appear later, whatever this call was (ops-delete.ts).
  if (e.deletion === "deleted") {
    run.stats.deletes.checked++;
    violate(run.stats, await deletionViolations(run, e, "a later call"));
  }
  return result;
}

/** Records an error that no injected fault explains. */
export function unexpected(run: ChaosRun, e: Engine, what: string, error: unknown) {
  if (error instanceof InjectedFault) return;
  if (error instanceof AppError && (error.code === "inbox.already_answered" || isRetryable(error))) return;
  // A deleted process refuses every write and is not found by every read (docs/api.md, "Deleting a process").
  if (e.deletion && error instanceof AppError && (error.code === "process.deleted" || error.kind === "not_found")) return;
  violate(run.stats, [`${where(e)}: ${what} failed without an injected fault: ${describe(error)}`]);
}

/** Runs `fn` with the planned faults; when that fails, once more with none (what an engine retries). */
export async function withRetry<T>(
  run: ChaosRun,
  e: Engine,
  faults: OpFaults,
  what: string,
  retriable: boolean,
  fn: (deps: ServiceDeps) => Promise<T>,
  container?: Container,
): Promise<T | undefined> {
  const first = await attempt(run, e, faults, fn, container ?? e.container);
  if (first.ok) return first.value;
  unexpected(run, e, what, first.error);
  if (!retriable) return undefined;
  run.stats.retries++;
  const again = await attempt(run, e, { ...NO_FAULTS, stall: faults.stall, hold: faults.hold }, fn, first.dead || !container ? e.container : container);
  if (again.ok) return again.value;
  unexpected(run, e, `${what} (retry)`, again.error);
  return undefined;
}
