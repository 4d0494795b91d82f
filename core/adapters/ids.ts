/** Clock and prefixed ULID ids (`msg_…`, `mem_…`, `inb_…`): sortable by creation time. */
import { monotonicFactory } from "ulidx";
import { randomUUID } from "node:crypto";
import type { Clock, Ids } from "../ports/clock.js";

export const systemClock: Clock = { now: () => new Date() };

export function createUlidIds(): Ids {
  // Monotonic within a container, so two messages in the same millisecond keep their order.
  const next = monotonicFactory();
  return {
    message: (at) => `msg_${next(at.getTime())}`,
    memory: (at) => `mem_${next(at.getTime())}`,
    inbox: (at) => `inb_${next(at.getTime())}`,
    token: () => randomUUID(),
  };
}
