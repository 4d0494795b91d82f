/**
 * The evidence ledger's tunables (docs/configuration.md, "Tunables"), spread into the one list in
 * core/domain/tunables.ts: its share of the window, its ceiling, and an engine's own tool names.
 */
import * as z from "../zod.js";
import { invalid } from "../errors.js";
import { TOOL_KINDS, type ToolKind } from "./tools.js";

export const LEDGER_FIELDS = {
  /**
   * The evidence ledger's section of the memory block takes at most this share of the model's
   * window (docs/evidence-ledger.md, "The evidence ledger"), and at most `ledgerMaxTokens`. 0 = no
   * section (each summary still keeps its ledger).
   */
  ledgerWindowShare: z.number("must be a number").check(
    z.gte(0, "must be >= 0"),
    z.lte(0.5, "must be <= 0.5"),
    z.refine((v) => v === 0 || v >= 0.001, "must be 0 (off) or at least 0.001"),
  ),
  ledgerMaxTokens: z.number("must be a number").check(z.int("must be an integer"), z.gte(0, "must be >= 0"), z.lte(100_000, "must be <= 100000")),
  /**
   * An engine's own tool names and what each does (docs/evidence-ledger.md, "Tool vocabularies"):
   * `{ "my_read": "read", "sh": "command" }`; unset: the built-in vocabulary only.
   */
  ledgerTools: z.optional(
    z
      .record(z.string().check(z.minLength(1), z.maxLength(256)), z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]))
      .check(z.refine((r) => Object.keys(r).length <= 100, "must name at most 100 tools")),
  ),
};

/** 10% of the window, up to 8,000 tokens: 3,200 at 32k (figures in docs/benchmarks.md, "Agent evidence"). */
export const LEDGER_DEFAULTS = { ledgerWindowShare: 0.1, ledgerMaxTokens: 8000 } as const;

export const LEDGER_ENV = { ledgerWindowShare: "LEDGER_WINDOW_SHARE", ledgerMaxTokens: "LEDGER_MAX_TOKENS", ledgerTools: "LEDGER_TOOLS" } as const;

/** `LEDGER_TOOLS` holds the object as JSON; malformed JSON throws naming the variable. */
export function ledgerVariable(name: string, field: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw invalid("tunables.invalid", `Invalid compaction tunables: ${name} (${field}): expected a JSON object, got '${raw.slice(0, 80)}'`, {
      fields: [field],
      issues: [{ field, message: "expected a JSON object" }],
    });
  }
}
