/**
 * Runs actors (service calls over their own held clients) one DynamoDB call at a time, in the
 * order a chooser picks. Between two releases nothing else reaches DynamoDB, so the chooser's
 * sequence of actor names decides the outcome completely: the same sequence replays the same run.
 *
 * After a call is released and answered, the actor runs on (promise callbacks only) until its next
 * call, its end, or a timer: an actor that is neither done nor holding a call is asleep (a revert
 * waiting for another's lease). Its timers are virtual (virtual-timers.ts): it stays enabled, and
 * choosing it fires its oldest timer, one step like a call. Moving away from a sleeping actor is
 * not a preemption (it yielded). Should an actor wait on anything else, choosing it waits for it
 * in real time.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createHeldClient, type HeldCall } from "./held-client.js";
import { installVirtualTimers, runAsActor, type VirtualTimer } from "./virtual-timers.js";

export interface ActorSpec {
  name: string;
  /** Starts the actor's work over `client` (its store is built on it). */
  start(client: DynamoDBDocumentClient): Promise<unknown>;
}

/** What the chooser sees at one step. */
export interface Choice {
  /** Actors not known to be done, in declaration order. */
  enabled: string[];
  /** Those of them holding a call (the others are asleep). */
  pending: string[];
  /** The actor of the previous step. */
  previous: string | null;
}

export type Chooser = (step: number, choice: Choice) => string;

export interface Step extends Choice {
  actor: string;
  /** The command released, `timer` when a sleeping actor's timer fired, null when it ended without either. */
  call: string | null;
  /** DynamoDB refused the call (a failed condition, a cancelled transaction). */
  refused?: string;
  /** The released command's input, for checks that need to know what was written when. */
  input?: unknown;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface ScheduleRun {
  steps: Step[];
  outcomes: Map<string, Outcome>;
}

export interface RunOptions {
  /** A schedule longer than this is a livelock (default 2,000 steps). */
  maxSteps?: number;
  /** How long a sleeping actor may take to call again or end (default 10 s). */
  wakeTimeoutMs?: number;
}

/** The chooser asked for an actor that is not enabled: a replayed schedule does not fit this run. */
export class ScheduleMismatch extends Error {}

interface ActorState {
  name: string;
  queue: HeldCall[];
  timers: VirtualTimer[];
  onTimer?: () => void;
  done: boolean;
  outcome?: Outcome;
  asleep: boolean;
  changed?: () => void;
}

/** Lets promise callbacks run to their next held call (they need no I/O to get there). */
async function quiesce() {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

function wake(a: ActorState, timeoutMs: number): Promise<void> {
  if (a.done || a.queue.length > 0 || a.timers.length > 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`actor ${a.name} neither called DynamoDB nor ended within ${timeoutMs} ms`)), timeoutMs);
    a.changed = () => {
      clearTimeout(timer);
      a.changed = undefined;
      resolve();
    };
  });
}

/** Runs `actors` to their end, releasing one held call per step of `choose`. */
export async function runSchedule(
  real: DynamoDBDocumentClient,
  actors: readonly ActorSpec[],
  choose: Chooser,
  options: RunOptions = {},
): Promise<ScheduleRun> {
  const maxSteps = options.maxSteps ?? 2_000;
  const wakeTimeoutMs = options.wakeTimeoutMs ?? 10_000;
  const states: ActorState[] = actors.map((spec) => ({ name: spec.name, queue: [], timers: [], done: false, asleep: false }));
  // Before the actors start: a timer set in their first steps is already virtual.
  const uninstall = installVirtualTimers();
  actors.forEach((spec, i) => {
    const state = states[i]!;
    state.onTimer = () => state.changed?.();
    const client = createHeldClient(real, (call) => {
      state.queue.push(call);
      state.changed?.();
    });
    const finish = (outcome: Outcome) => {
      state.done = true;
      state.outcome = outcome;
      state.changed?.();
    };
    // Started in a callback, so a synchronous throw is an outcome like any other.
    void Promise.resolve()
      .then(() => runAsActor(state, () => spec.start(client)))
      .then(
        (value) => finish({ ok: true, value }),
        (error) => finish({ ok: false, error }),
      );
  });
  try {
    return await schedule(states, choose, maxSteps, wakeTimeoutMs);
  } finally {
    uninstall();
  }
}

async function schedule(states: ActorState[], choose: Chooser, maxSteps: number, wakeTimeoutMs: number): Promise<ScheduleRun> {
  const byName = new Map(states.map((s) => [s.name, s]));
  await quiesce();
  for (const s of states) s.asleep = !s.done && s.queue.length === 0;

  const steps: Step[] = [];
  let previous: string | null = null;
  for (let step = 0; ; step++) {
    const live = states.filter((s) => !s.done);
    if (live.length === 0) break;
    if (step >= maxSteps) throw new Error(`schedule did not end within ${maxSteps} steps`);
    const choice: Choice = {
      enabled: live.map((s) => s.name),
      pending: live.filter((s) => !s.asleep).map((s) => s.name),
      previous,
    };
    const name = choose(step, choice);
    const actor = byName.get(name);
    if (!actor || actor.done) throw new ScheduleMismatch(`step ${step}: '${name}' is not one of [${choice.enabled.join(", ")}]`);
    await wake(actor, wakeTimeoutMs);
    const record: Step = { ...choice, actor: name, call: null };
    const call = actor.queue.shift();
    if (call) {
      record.call = call.name;
      record.input = call.command.input;
      const answer = await call.release();
      if (!answer.ok) record.refused = answer.error ?? "error";
    } else if (actor.timers.length > 0) {
      record.call = "timer";
      actor.timers[0]!.fire();
    }
    await quiesce();
    actor.asleep = !actor.done && actor.queue.length === 0;
    steps.push(record);
    previous = name;
  }
  return { steps, outcomes: new Map(states.map((s) => [s.name, s.outcome!])) };
}
