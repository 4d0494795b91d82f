/**
 * Makes the local wire server (tools/llm-wire-server.ts) hold every request without answering, and
 * tells the test when each has arrived, so a test on a fake clock fires an attempt's timer only
 * once its request is in.
 */
import type { LlmWireServer } from "../../tools/llm-wire-server.js";

export function hangingProvider(server: LlmWireServer, body: Record<string, unknown>) {
  let arrived = 0;
  let waiting: Array<{ n: number; wake: () => void }> = [];
  server.setFallback(() => {
    arrived += 1;
    for (const w of waiting) if (w.n <= arrived) w.wake();
    waiting = waiting.filter((w) => w.n > arrived);
    return { delayMs: 10_000, body };
  });
  let expected = 0;
  return {
    /** Resolves once the next request (the first, then the second, …) has reached the server. */
    next(): Promise<void> {
      const n = ++expected;
      return n <= arrived ? Promise.resolve() : new Promise<void>((wake) => waiting.push({ n, wake }));
    },
  };
}
