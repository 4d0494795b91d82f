/** A Log that keeps its entries in memory so tests can assert on them. */
import type { Log } from "../../core/ports/logger.js";

export function createMemoryLog() {
  const entries: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void entries.push({ level, message, ...(fields ? { fields } : {}) });
  return { entries, info: at("INFO"), warn: at("WARN"), error: at("ERROR") } satisfies Log & { entries: unknown };
}
