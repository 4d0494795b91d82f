/**
 * The evidence ledger's tunables (docs/configuration.md, "Tunables") that core/domain/tunables.ts
 * takes into its one list: an engine's own tool names, the defaults and the variables.
 */
import * as z from "../zod.js";
import { TOOL_KINDS, type ToolKind } from "./section.js";

/**
 * An engine's own tool names and what each does (docs/evidence-ledger.md, "Tool vocabularies"):
 * `{ "my_read": "read", "sh": "command" }`; unset: the built-in vocabulary only. Its share of the
 * window and its ceiling are in core/domain/tunables.ts with the other tunables.
 */
export const LEDGER_TOOLS_FIELD = z.optional(
  z
    .record(z.string().check(z.minLength(1), z.maxLength(256)), z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]))
    .check(z.refine((r) => Object.keys(r).length <= 100, "must name at most 100 tools")),
);

/** 10% of the window, up to 8,000 tokens: 3,200 at 32k (figures in docs/benchmarks.md, "Agent evidence"). */
export const LEDGER_DEFAULTS = { ledgerWindowShare: 0.1, ledgerMaxTokens: 8000 } as const;

export const LEDGER_ENV = { ledgerWindowShare: "LEDGER_WINDOW_SHARE", ledgerMaxTokens: "LEDGER_MAX_TOKENS", ledgerTools: "LEDGER_TOOLS" } as const;

/** `LEDGER_TOOLS` holds the object as JSON; what is not JSON is kept as text, which the schema then refuses naming the variable. */
export function ledgerVariable(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
