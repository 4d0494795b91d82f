/** The summary chain of a process, newest first, for audit and the inspector. */
import { notFound } from "../domain/errors.js";
import { newestCommittedFirst } from "../domain/memory-order.js";
import type { LossUnit, Memory } from "../domain/model.js";
import type { Ledger } from "../domain/ledger/model.js";
import type { ProcessKey } from "../ports/store.js";
import type { CoreDeps } from "./deps.js";
import { withBlock } from "./native-content.js";
import { requireProcess } from "./processes.js";

/** A memory as listed: without the per-line citations, the full loss list and the evidence ledger (one request away). */
export function withoutDetail(memory: Memory): Memory {
  const { citations: _citations, droppedUnits: _dropped, keepUnits: _keep, ledger: _ledger, ...rest } = memory;
  return rest;
}

export async function listMemories(
  deps: CoreDeps,
  key: ProcessKey,
  filter: { kind: "ARCHIVED_CHAT"; includeSuperseded: boolean; includeFailed: boolean; includePrepared?: boolean; includeReverted?: boolean },
): Promise<Memory[]> {
  const memories = await deps.store.listMemories(key);
  if (memories.length === 0) await requireProcess(deps, key);
  return memories
    .filter(
      (m) =>
        m.kind === filter.kind &&
        (m.status === "OK" ||
          // What did not become a summary, with its reason: `metadata.error` or `metadata.discardReason`.
          (filter.includeFailed && (m.status === "FAILED" || m.status === "DISCARDED")) ||
          (filter.includeReverted === true && m.status === "REVERTED") ||
          // Background folds (docs/compaction.md): queued, prepared, and the discarded ones.
          (filter.includePrepared === true && (m.status === "QUEUED" || m.status === "PREPARED" || m.status === "DISCARDED"))) &&
        (filter.includeSuperseded || m.supersededAt === null),
    )
    .sort(newestCommittedFirst)
    .map(withoutDetail);
}

export interface MemoryDetail {
  memory: Memory;
  /** What the fold lost: every dropped unit stored (not only the preview in `metadata.loss`). */
  loss: { units: number; kept: number; dropped: LossUnit[] } | null;
  /** Per line of the summary (1-based), the messages it came from. */
  provenance: Array<{ line: number; text: string; messageIds: string[] }>;
  /** The evidence ledger in full, every entry with the message it cites (docs/evidence-ledger.md, "The evidence ledger"). */
  ledger: Ledger | null;
}

/** One memory with its full loss report and per-line provenance (docs/compaction.md). */
export async function memoryDetail(deps: CoreDeps, key: ProcessKey, memoryId: string): Promise<MemoryDetail> {
  const memory = await deps.store.getMemory(key, memoryId);
  if (!memory) {
    await requireProcess(deps, key);
    throw notFound("memory", memoryId);
  }
  const preview = memory.metadata.loss;
  const loss = preview ? { units: preview.units, kept: preview.kept, dropped: memory.droppedUnits ?? preview.dropped } : null;
  const lines = memory.content ? memory.content.split("\n") : [];
  return {
    // The block whole, put back from its blob when it has one.
    memory: withoutDetail(await withBlock(deps, key, memory)),
    loss,
    provenance: lines.map((text, i) => ({ line: i + 1, text, messageIds: memory.citations?.[i] ?? [] })),
    ledger: memory.ledger ?? null,
  };
}
