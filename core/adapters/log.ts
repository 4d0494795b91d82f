/** Log adapters: one JSON line per entry (CloudWatch-friendly), or silence for tests. */
import type { Log } from "../ports/logger.js";

export function createJsonLog(service = "vancetope-memory", write: (line: string) => void = (l) => console.log(l)): Log {
  const line = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    write(JSON.stringify({ level, service, timestamp: new Date().toISOString(), message, ...fields }));
  return { info: line("INFO"), warn: line("WARN"), error: line("ERROR") };
}

export const silentLog: Log = { info: () => {}, warn: () => {}, error: () => {} };

/** Keeps entries in memory so tests can assert on them. */
export function createMemoryLog() {
  const entries: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void entries.push({ level, message, ...(fields ? { fields } : {}) });
  return { entries, info: at("INFO"), warn: at("WARN"), error: at("ERROR") } satisfies Log & { entries: unknown };
}
