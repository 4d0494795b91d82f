/**
 * The harness as the event bus: it delivers what the services published to their handlers the
 * way EventBridge and Lambda would, duplicated, concurrent, late and retried up to three times.
 * InboxItemAnswered goes to the inbox handler; CompactionRequested goes to the worker, whose
 * deliveries crash their container before and after it stores a prepared summary. The outcome of
 * each accepted offer is recorded so the end checks can tell a folded offer from a lost one.
 */
import { EVENTS } from "../../core/domain/events.js";
import { InjectedFault } from "../faulty-store.js";
import { attempt, describe, isRetryable, NO_FAULTS, type OpFaults, type RunningOp } from "./attempt.js";
import type { OpPlan } from "./plan.js";
import { countFault, violate } from "./report.js";
import { detailOf, sameProcess, sleep, where, type ChaosRun, type Engine, type OfferRecord, type PublishedEvent } from "./run-state.js";
import { handleInboxAnswered, handleCompactionRequested } from "../../core/adapters/events/handlers.js";

/** Up to three attempts, as Lambda's async invocation makes; a failed attempt is retried later. */
const ATTEMPTS = 3;

/**
 * Delivers every InboxItemAnswered of the engine's process that no handler acknowledged yet, then
 * the range jobs they queued. An op planned with `lateBy` leaves them for later: the engine runs
 * its next `lateBy` ops first, and the delivery then runs alongside the one after (run-plan.ts).
 * One planned with `redeliver` delivers them now and once more after its next `redeliver` ops.
 */
export async function deliverPending(run: ChaosRun, e: Engine, op: RunningOp | null = null) {
  if (run.options.execution === "background") await deliverFolds(run, e, op);
  const mine = run.events.filter((ev) => {
    const d = detailOf(ev);
    return (
      ev.source === EVENTS.InboxItemAnswered.source &&
      ev.detailType === "InboxItemAnswered" &&
      ev.delivered === 0 &&
      !ev.claimed &&
      d.tenantId === e.key.tenantId &&
      run.offers.get(`${d.tenantId}/${d.itemId}`)?.processId === e.key.processId
    );
  });
  if (op?.lateBy && mine.length > 0) {
    for (const ev of mine) ev.claimed = true;
    countFault(run.stats, "stall:late-delivery");
    run.stats.stalls.late++;
    e.late.push({ due: e.opsRun + 1 + op.lateBy, deliver: () => deliverAnswers(run, e, mine, op) });
    return;
  }
  await deliverAnswers(run, e, mine, op);
  if (op?.redeliver && mine.length > 0) {
    countFault(run.stats, "stall:late-redelivery");
    run.stats.stalls.late++;
    e.late.push({ due: e.opsRun + 1 + op.redeliver, deliver: () => deliverAnswers(run, e, mine, null) });
  }
}

async function deliverAnswers(run: ChaosRun, e: Engine, events: readonly PublishedEvent[], op: RunningOp | null) {
  for (const event of events) await deliverAnswer(run, e, event, op);
  // Range jobs run in the worker in both modes; in the background mode they also meet the
  // prepared folds and manual compactions of later ops, delivered late.
  if (events.length > 0 && run.options.execution !== "background") await deliverFolds(run, e, op);
}

/** The worker's share: the process's CompactionRequested events nobody handled yet, newest first (older ones arrive late). */
export async function deliverFolds(run: ChaosRun, e: Engine, op: RunningOp | null = null) {
  const mine = run.events
    .filter((ev) => ev.detailType === EVENTS.CompactionRequested.detailType && ev.delivered === 0 && sameProcess(ev, e))
    .reverse();
  // Range jobs after the others: a range committed first would leave every older prepare job
  // stale, so the worker would never reach its prepared summary (where the crashes are planned).
  const ordered = [...mine.filter((ev) => ev.detail.job !== "range"), ...mine.filter((ev) => ev.detail.job === "range")];
  for (const event of ordered) await deliverFold(run, e, event, op, op?.deliveries ?? 1);
}

const settleOffer = (run: ChaosRun, record: OfferRecord | undefined, outcome: string) => {
  if (outcome === "compacted") run.stats.offers.rangeCompacted++;
  record?.outcomes.push(outcome);
};

/** Runs `one(copy)` for each copy of a delivery: all at once when the op says so, else one after another. */
async function deliverCopies(op: OpPlan | null, copies: number, one: (copy: number) => Promise<void>) {
  if (op?.concurrentDeliveries) await Promise.all(Array.from({ length: copies }, (_, i) => one(i)));
  else for (let i = 0; i < copies; i++) await one(i);
}

/** Delivers one published InboxItemAnswered event `deliveries` times, each redelivered on error. */
async function deliverAnswer(run: ChaosRun, e: Engine, event: PublishedEvent, op: RunningOp | null) {
  const record = run.offers.get(`${detailOf(event).tenantId}/${detailOf(event).itemId}`);
  const copies = op?.deliveries ?? 1;
  if (copies > 1) countFault(run.stats, "duplicate-delivery", copies - 1);
  const one = async (copy: number) => {
    for (let n = 1; n <= ATTEMPTS; n++) {
      // The op's compaction fault (and summarizer outcomes) meet the first attempt of the first copy.
      const faults = copy === 0 && n === 1 && op && op.fault?.method !== "appendMessage" ? op : NO_FAULTS;
      const r = await attempt(run, e, faults, (deps) => handleInboxAnswered(deps, event.detail));
      if (r.ok) {
        event.delivered++;
        const out = r.value;
        // The range itself is folded by the worker: its job's outcome is the offer's.
        if (out?.reason === "compaction_queued" && out.memoryId && record) run.rangeJobs.set(out.memoryId, record);
        else settleOffer(run, record, out === null ? "skipped" : (out.reason ?? "no_reason"));
        return;
      }
      if (!(r.error instanceof InjectedFault) && !isRetryable(r.error)) {
        violate(run.stats, [`${where(e)}: InboxItemAnswered handler failed: ${describe(r.error)}`]);
      }
      await sleep(run.leaseMs + 20);
    }
  };
  await deliverCopies(op, copies, one);
}

/**
 * Delivers one CompactionRequested to the worker `copies` times (a duplicate is concurrent when
 * the op says so), each redelivered on error. Every third delivery of a prepare job makes a crash
 * due, by turns before and after the worker stores the prepared summary; every second delivery of
 * a commit job one before and after its commit transaction. A due crash rides on
 * every first attempt until one of them reaches the store and dies there: most deliveries find
 * their fold stale or leased and never write it, so a crash planned for one delivery alone could
 * miss the store for a whole run. The turn follows the crashes that happened, not the deliveries:
 * which delivery reaches the store depends on how the engines interleave, and both sides must be
 * hit whatever that order is.
 */
async function deliverFold(run: ChaosRun, e: Engine, event: PublishedEvent, op: RunningOp | null, copies: number) {
  if (copies > 1) countFault(run.stats, "duplicate-delivery", copies - 1);
  const one = async (copy: number) => {
    for (let n = 1; n <= ATTEMPTS; n++) {
      // A range job stores no prepared summary: the crash schedule counts the other jobs only. A
      // commit job (a prepared fold a turn found due) crashes at its commit transaction instead.
      const commitJob = event.detail.job === "commit";
      const prepareJob = event.detail.job !== "range" && !commitJob;
      if (prepareJob && ++run.workerDeliveries % 3 === 0) run.workerCrashDue = true;
      if (commitJob && ++run.commitDeliveries % 2 === 0) run.commitCrashDue = true;
      const crash: OpFaults | null =
        prepareJob && copy === 0 && n === 1 && run.workerCrashDue
          ? { fault: { method: "storeFold", when: run.workerCrashes % 2 ? "after" : "before", nth: 1, crash: true }, summarizer: [] }
          : commitJob && copy === 0 && n === 1 && run.commitCrashDue
            ? { fault: { method: "commitCompaction", when: run.commitCrashes % 2 ? "after" : "before", nth: 1, crash: true }, summarizer: [] }
            : null;
      // The op's summarizer outcomes and stall meet the worker's first attempt (the range job of an
      // accepted offer, or the prepared fold of a turn).
      const faults =
        crash ?? (copy === 0 && n === 1 && op && op.fault?.method !== "appendMessage" ? { fault: null, summarizer: op.summarizer, stall: op.stall, hold: op.hold } : NO_FAULTS);
      const r = await attempt(run, e, faults, (deps) => handleCompactionRequested(deps, event.detail));
      if (crash && r.dead && commitJob) {
        run.commitCrashes++;
        run.commitCrashDue = false;
      } else if (crash && r.dead) {
        run.workerCrashes++;
        run.workerCrashDue = false;
      }
      if (r.ok) {
        event.delivered++;
        const out = r.value;
        const outcome = "done" in out ? out.done : "skipped";
        run.stats.worker[outcome] = (run.stats.worker[outcome] ?? 0) + 1;
        const offer = out.foldId ? run.rangeJobs.get(out.foldId) : undefined;
        if (offer && "done" in out && out.done === "committed") {
          e.memories.add(out.foldId);
          settleOffer(run, offer, "compacted");
        } else if (offer && "skipped" in out && out.skipped === "nothing_in_range") settleOffer(run, offer, "nothing_in_range");
        return;
      }
      if (!(r.error instanceof InjectedFault) && !isRetryable(r.error)) {
        violate(run.stats, [`${where(e)}: CompactionRequested handler failed: ${describe(r.error)}`]);
      }
      await sleep(run.leaseMs + 20);
    }
  };
  await deliverCopies(op, copies, one);
}
