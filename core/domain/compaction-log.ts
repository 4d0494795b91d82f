/**
 * The log line of a committed compaction (docs/operations.md, "What the service reports"):
 * `<engine>.turn id='<turn>' compaction (<when>) ok: <n> msgs -> <chars> chars`, the engine's name
 * first so that one engine's compactions can be found by prefix.
 */
import type { Memory } from "./model.js";

/** The engine named when the process names none (its `engine` field is optional). */
export const DEFAULT_ENGINE = "memory";

export interface CompactionLogParts {
  /** The process's `engine`, if it names one. */
  engine?: string | undefined;
  /** The id of the turn's message, or the memory's id for a fold no turn committed. */
  turn: string;
  /** How the fold was produced (`inline`, `prepared`, `worker`, `manual`) and its mode. */
  how: string;
  mode: string;
  messages: number;
  chars: number;
}

export function compactionLogLine(p: CompactionLogParts): string {
  const engine = p.engine || DEFAULT_ENGINE;
  return `${engine}.turn id='${p.turn}' compaction (${p.how} ${p.mode}) ok: ${p.messages} msgs -> ${p.chars} chars`;
}

/**
 * The line of a committed fold. A fold committed in a turn (inline or prepared, in a fold mode)
 * names the turn's message: the newest active message when it committed, which is the one the
 * turn appended. Any other fold (manual, the worker's, a range) names its memory.
 */
export function committedLogLine(
  memory: Pick<Memory, "id" | "content" | "sourceRefs" | "metadata">,
  o: { engine?: string | undefined; newestMessageId?: string | undefined; manual?: boolean | undefined },
): string {
  const producedBy = memory.metadata.producedBy ?? "inline";
  const mode = memory.metadata.mode ?? "";
  const inTurn = !o.manual && producedBy !== "worker" && mode !== "RANGE";
  return compactionLogLine({
    engine: o.engine,
    turn: (inTurn ? o.newestMessageId : undefined) ?? memory.id,
    how: o.manual ? "manual" : producedBy,
    mode,
    messages: memory.sourceRefs.length,
    chars: memory.content.length,
  });
}
