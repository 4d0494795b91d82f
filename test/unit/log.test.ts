/** The Lambda log adapter: Powertools Logger lines with the service, level, message and fields. */
import { Logger } from "@aws-lambda-powertools/logger";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPowertoolsLog } from "../../core/adapters/log.js";

afterEach(() => vi.restoreAllMocks());

describe("createPowertoolsLog", () => {
  it("writes one JSON line per entry with the service, level, message and fields", () => {
    const lines: string[] = [];
    // Powertools writes INFO to stdout and WARN/ERROR to stderr, like console.
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
    }
    const log = createPowertoolsLog("svc-test", new Logger({ serviceName: "svc-test", logLevel: "INFO" }));
    log.warn("lease release failed", { processId: "p1" });
    log.info("plain");
    const entries = lines.join("").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries).toEqual([
      expect.objectContaining({ level: "WARN", service: "svc-test", message: "lease release failed", processId: "p1" }),
      expect.objectContaining({ level: "INFO", service: "svc-test", message: "plain" }),
    ]);
    expect(entries.every((e) => typeof e.timestamp === "string")).toBe(true);
  });
});
