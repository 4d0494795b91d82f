/**
 * An in-memory stand-in of the stage's dead-letter queue: received messages are hidden from the
 * next receive (SQS's visibility timeout, which never ends here) until released or removed.
 */
import type { DeadLetterQueue, QueuedLetter } from "../../core/adapters/events/dead-letters.js";

export interface MemoryDeadLetterQueue extends DeadLetterQueue {
  /** What the queue holds, hidden messages included. */
  held(): QueuedLetter[];
  push(body: unknown, attributes?: Record<string, string>): void;
}

export function createMemoryDeadLetterQueue(): MemoryDeadLetterQueue {
  const letters: Array<QueuedLetter & { hidden: boolean }> = [];
  let seq = 0;
  return {
    held: () => letters.map(({ hidden: _, ...l }) => l),
    push(body, attributes = {}) {
      letters.push({ receipt: `r${++seq}`, body: typeof body === "string" ? body : JSON.stringify(body), attributes, hidden: false });
    },
    async receive(max) {
      const visible = letters.filter((l) => !l.hidden).slice(0, Math.min(10, max));
      for (const l of visible) l.hidden = true;
      return visible.map(({ hidden: _, ...l }) => l);
    },
    async release(letter) {
      const found = letters.find((l) => l.receipt === letter.receipt);
      if (found) found.hidden = false;
    },
    async remove(letter) {
      const at = letters.findIndex((l) => l.receipt === letter.receipt);
      if (at >= 0) letters.splice(at, 1);
    },
  };
}
