/**
 * A background fold's states (docs/compaction.md, "A fold's states"), as a union by status with a
 * typed mode and job, read once from the stored row by {@link asFold}.
 */
import type { FoldJob, FoldTarget, Memory } from "../model.js";
import { blockFormat } from "../native/memory-block.js";
import type { CompactionResult } from "../compaction-result.js";
import { LATEST_DELIVERY_MS } from "../late-delivery.js";
import type { FoldModeName } from "../mode-policy.js";

export type { FoldJob };

/**
 * How long a queued fold stays usable. A turn's own job: `preparedTtlMs`, since a later turn
 * queues it again. A job a caller was told is on its way (a manual compaction answered 202, an
 * accepted offer's range job) has no turn behind it: it lives as long as its request can still
 * arrive (docs/reliability.md, "Late deliveries").
 */
export const queuedLifeMs = (job: FoldJob, preparedTtlMs: number) => (job === "prepare" ? preparedTtlMs : LATEST_DELIVERY_MS);

/** What the worker is asked to do: a queued fold's job, or the commit of a prepared fold. */
export type RequestedJob = FoldJob | "commit";

interface Row {
  id: string;
  /** The stored row it was read from (the wire and storage type). */
  memory: Memory;
  job: FoldJob;
  /** When the fold stops being usable (epoch ms); null: never (a settled row). */
  expiresAt: number | null;
}

/** Work to do for the state of META `queuedAtVersion` (a range job runs on any state). */
export type QueuedFold = Row & { status: "QUEUED"; queuedAt: number; queuedAtVersion: number | undefined } & (
    | { job: "prepare" | "manual"; mode: FoldModeName; forced: boolean }
    | { job: "range"; mode: "RANGE" }
  );

/**
 * A summary ready to commit: it chains `chains` (the active summary when it was prepared) and
 * covers `sourceRefs` (empty when read from the active view, which does not carry them).
 * `extended`: it was extended once already, in place (docs/compaction.md, "Who commits a prepared fold").
 */
export type PreparedFold = Row & { status: "PREPARED"; mode: FoldModeName; chains: string | null; sourceRefs: string[]; extended: boolean };

/** A row no job works on any more. */
export type SettledFold = Row & { status: "OK" | "FAILED" | "DISCARDED" | "REVERTED"; mode: FoldModeName | "RANGE" };

export type Fold = QueuedFold | PreparedFold | SettledFold;

/** A fold that a job or a turn may still act on. */
export type LiveFold = QueuedFold | PreparedFold;

const time = (at: string | undefined) => (at === undefined ? null : Date.parse(at));

/** The fold a stored row is. Rows written before `preparedFor` was recorded are HARD folds. */
export function asFold(m: Memory): Fold {
  const md = m.metadata;
  const job = md.job ?? "prepare";
  const target = md.preparedFor ?? (job === "range" ? "RANGE" : "HARD");
  const row = { id: m.id, memory: m, job, expiresAt: time(md.expiresAt) };
  const mode = target === "RANGE" ? "HARD" : target;
  switch (m.status) {
    case "QUEUED": {
      const queued = { ...row, status: m.status, queuedAt: Date.parse(md.queuedAt ?? m.createdAt), queuedAtVersion: md.queuedAtVersion };
      return job === "range" ? { ...queued, job, mode: "RANGE" } : { ...queued, job, mode, forced: md.forced === true };
    }
    case "PREPARED":
      return { ...row, status: m.status, mode, chains: md.supersededMemoryId ?? null, sourceRefs: m.sourceRefs, extended: md.extended !== undefined };
    default:
      return { ...row, status: m.status, expiresAt: null, mode: target };
  }
}

/** The mode a queued or prepared fold was made for (a range job's: none of the ladder). */
export const foldModeOf = (m: Memory): FoldModeName => {
  const f = asFold(m);
  return f.mode === "RANGE" ? "HARD" : f.mode;
};

/** The metric dimension of what a fold is for (`HARD` -> `hard`): derived from the mode, never the reverse. */
export const metricModeOf = (mode: FoldTarget) => mode.toLowerCase() as Lowercase<FoldTarget>;

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
    block: m.providerFold?.block === true && blockFormat(memory) !== undefined,
    inputTokens: Math.round(m.usage?.inputTokens ?? 0),
    outputTokens: Math.round(m.usage?.outputTokens ?? 0),
    ms: Math.round(m.summarizerMs ?? 0),
  };
}
