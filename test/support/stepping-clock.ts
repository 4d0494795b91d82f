/**
 * A clock that never reads the same millisecond twice: the wall clock, moved on by one millisecond
 * whenever it has not advanced since the last reading. Tests that compare `createdAt` values (and
 * take their own boundaries between two writes) use it instead of sleeping for distinct times.
 */
import type { Clock } from "../../core/ports/clock.js";

export function steppingClock(): Clock {
  let last = 0;
  return {
    now() {
      last = Math.max(Date.now(), last + 1);
      return new Date(last);
    },
  };
}
