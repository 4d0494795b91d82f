/**
 * Timers of the actors run on the scheduler's clock, not the wall clock: a service that waits (a
 * revert backing off from another's lease, a retry loop) sets a timer inside its actor; that timer
 * never fires by itself. The actor counts as asleep, and the scheduler fires the timer when it
 * chooses that actor (see scheduler.ts). A wait thus costs no real time and stays a yield point,
 * and which actor runs while another sleeps is a choice of the schedule like any other.
 *
 * Only timers set in an actor's async context up to {@link VIRTUAL_UP_TO_MS} are virtual. Longer
 * ones (a manual compaction's 10-minute budget in the checker) and every timer outside the actors
 * (the SDK's, the scheduler's own) keep the real clock.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export const VIRTUAL_UP_TO_MS = 60_000;

export interface Sleeper {
  /** Timers the actor set and that have not fired, oldest first. */
  timers: VirtualTimer[];
  /** Called when the actor sets a timer. */
  onTimer?: () => void;
}

export interface VirtualTimer {
  fire(): void;
}

const context = new AsyncLocalStorage<Sleeper>();
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
let installed = 0;

class Handle implements VirtualTimer {
  constructor(
    private readonly owner: Sleeper,
    private readonly callback: () => void,
  ) {}
  fire() {
    this.cancel();
    this.callback();
  }
  cancel() {
    const i = this.owner.timers.indexOf(this);
    if (i >= 0) this.owner.timers.splice(i, 1);
  }
  // What callers may do with a Node timer handle.
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  hasRef() {
    return false;
  }
  refresh() {
    return this;
  }
}

function patchedSetTimeout(callback: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) {
  const owner = context.getStore();
  if (!owner || typeof callback !== "function" || (delay ?? 0) > VIRTUAL_UP_TO_MS) return realSetTimeout(callback, delay, ...args);
  const handle = new Handle(owner, () => callback(...args));
  owner.timers.push(handle);
  owner.onTimer?.();
  return handle;
}

function patchedClearTimeout(handle: unknown) {
  if (handle instanceof Handle) handle.cancel();
  else realClearTimeout(handle as Parameters<typeof clearTimeout>[0]);
}

/** Runs `fn` as an actor whose timers are virtual; they collect in `sleeper.timers`. */
export function runAsActor<T>(sleeper: Sleeper, fn: () => T): T {
  return context.run(sleeper, fn);
}

/** Installs the virtual timers for as long as the returned function is not called (nested installs count). */
export function installVirtualTimers(): () => void {
  if (installed++ === 0) {
    globalThis.setTimeout = patchedSetTimeout as unknown as typeof setTimeout;
    globalThis.clearTimeout = patchedClearTimeout as typeof clearTimeout;
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--installed === 0) {
      globalThis.setTimeout = realSetTimeout;
      globalThis.clearTimeout = realClearTimeout;
    }
  };
}
