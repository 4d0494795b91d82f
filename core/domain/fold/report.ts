/** What a compaction answer says of the fold it committed (docs/summarizers.md, "Provider folds"). Pure. */
import type { Memory } from "../model.js";
import type { CompactionResult } from "../compaction-result.js";

/**
 * The `fold` of a compaction answer, from the memory the fold committed.
 *
 * @example foldReport(memory) // { by: "anthropic-compaction", kind: "provider", block: true, inputTokens: 5120, outputTokens: 410, ms: 812 }
 */
export function foldReport(memory: Memory): NonNullable<CompactionResult["fold"]> {
  const m = memory.metadata;
  return {
    by: m.provider,
    kind: m.providerFold ? "provider" : "service",
    block: m.providerFold?.block === true && memory.native !== undefined,
    inputTokens: Math.round(m.usage?.inputTokens ?? 0),
    outputTokens: Math.round(m.usage?.outputTokens ?? 0),
    ms: Math.round(m.summarizerMs ?? 0),
  };
}
