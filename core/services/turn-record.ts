/**
 * The last turn's record (docs/turns.md, "The last turn's record"): what a turn keeps on META of
 * the window it used and what it replayed, and what the next turn's answer says happened since.
 */
import { sameTurnRecord, type LastTurn } from "../domain/last-turn.js";
import type { ReplayMark } from "../domain/prefix.js";
import type { FoldUnit } from "../domain/tool-groups.js";
import type { TurnWindow } from "../domain/model-windows.js";
import { newestSummary } from "../domain/replay.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import type { CoreDeps } from "./deps.js";

/** What changed in the replay since the process's previous turn (docs/turns.md, "What the answer says happened"). */
export interface SinceLastTurn {
  /** Folds committed since, oldest first: the worker's and this turn's own. */
  folds: string[];
  /** More folds committed than the service looked back over (`folds` holds the newest of them). */
  more?: true;
  /** The summary the previous turn replayed was undone since: which folds are new cannot be told, `folds` is empty. */
  reverted?: true;
}

/** Store reads one answer may spend walking back the chain of summaries (the newest hop is free: the view holds it). */
export const MAX_FOLD_READS = 8;

/**
 * The record of a turn whose answer is composed from `view` with `window`, and whose prompt the
 * mark `replay` sums up (before the answer is made: the last turn's, carried over).
 */
export function turnRecord(deps: Pick<CoreDeps, "clock">, view: ActiveView, window: TurnWindow, replay: ReplayMark | undefined, foldUnit: FoldUnit): LastTurn {
  return {
    at: deps.clock.now().toISOString(),
    window: { tokens: window.tokens, source: window.source, ...(window.model !== undefined ? { model: window.model } : {}) },
    summaryId: newestSummary(view)?.id ?? null,
    version: view.state.version,
    ...(replay ? { replay } : {}),
    ...(foldUnit === "turn" ? { foldUnit } : {}),
  };
}

/**
 * Writes the turn's final record, unless the turn's append already wrote the same (the usual
 * turn: no second write) or, for a turn that appended nothing, the process already holds it.
 */
export async function keepTurnRecord(deps: CoreDeps, key: ProcessKey, o: { previous: LastTurn | undefined; written: LastTurn | undefined; final: LastTurn }) {
  if (sameTurnRecord(o.written ?? o.previous, o.final)) return;
  // The record only informs later answers: a store error costs the turn nothing but the record.
  await deps.store.recordTurn(key, o.final).catch((e: unknown) => deps.log.warn("turn record skipped", { processId: key.processId, error: String(e) }));
}

/**
 * The folds committed since the previous turn: the chain of summaries from the one replayed now
 * back to the one the previous turn replayed (each summary names the one it replaced). Absent on
 * a process's first recorded turn.
 */
export async function sinceLastTurn(deps: CoreDeps, key: ProcessKey, previous: LastTurn | undefined, after: ActiveView): Promise<SinceLastTurn | undefined> {
  if (!previous) return undefined;
  try {
    return await foldsSince(deps, key, previous, after);
  } catch (e) {
    // A store error leaves the field out of this answer; the turn goes on.
    deps.log.warn("folds since the last turn skipped", { processId: key.processId, error: String(e) });
    return undefined;
  }
}

async function foldsSince(deps: CoreDeps, key: ProcessKey, previous: LastTurn, after: ActiveView): Promise<SinceLastTurn> {
  const folds: string[] = [];
  let memory = newestSummary(after) ?? null;
  for (let reads = 0; (memory?.id ?? null) !== previous.summaryId; reads++) {
    if (!memory) return { folds: [], reverted: true };
    folds.unshift(memory.id);
    const prior = memory.metadata.supersededMemoryId ?? null;
    if (prior === previous.summaryId) break;
    if (prior === null) return { folds: [], reverted: true };
    if (reads === MAX_FOLD_READS) return { folds, more: true };
    memory = await deps.store.getMemory(key, prior);
  }
  return { folds };
}
