/**
 * The row each transition of a fold writes (docs/compaction.md, "A fold's states"), one builder
 * per transition; the services decide when, the store's conditions make each write happen once.
 */
import type { FoldJob, FoldTarget, Memory, Message } from "../model.js";
import type { NativeContent } from "../native/formats.js";
import type { RangeRequest } from "../range.js";
import type { FoldUnit } from "../tool-groups.js";
import { keepsLedger } from "../ledger/section.js";

type Metadata = Memory["metadata"];

/** The stored fields of a summary (services/summary-fields.ts). */
export interface SummaryFields {
  content: string;
  tokens: number;
  citations: string[][];
  droppedUnits: Memory["droppedUnits"];
  keepUnits?: string[];
  loss: Metadata["loss"];
  /** The evidence ledger and its rendered section (stored only when the ledger holds something). */
  ledger: NonNullable<Memory["ledger"]>;
  ledgerSection: NonNullable<Metadata["ledger"]>;
  /** A provider fold's block (docs/summarizers.md, "Provider folds"). */
  native?: NativeContent;
}

/** What every summarized row records of its summary: what it folds, what it chains, when. */
export interface SummaryParts {
  fold: readonly Message[];
  prior: Memory | null;
  at: Date;
  metadata: Pick<Metadata, "compactedMessages" | "provider" | "model" | "summarizerCalls" | "summarizerMs" | "usage" | "truncated" | "fallback" | "providerFold">;
}

export interface QueuedRow {
  id: string;
  processId: string;
  at: Date;
  ttlMs: number;
  version: number;
  mode: FoldTarget;
  job: FoldJob;
  contextWindow?: number | undefined;
  tokensBefore?: number | undefined;
  /** Whole turns: the chat model's fold rules (docs/turns.md, "What a fold may keep"). */
  foldUnit?: FoldUnit | undefined;
  forced?: boolean | undefined;
  instructions?: string | undefined;
  range?: (RangeRequest & { inboxItemId: string }) | undefined;
}

/** (none) -> QUEUED: work to do for the state of META `version`. */
export function queued(q: QueuedRow): Memory {
  const at = q.at.toISOString();
  const r = q.range;
  return {
    id: q.id,
    processId: q.processId,
    kind: "ARCHIVED_CHAT",
    status: "QUEUED",
    content: "",
    sourceRefs: [],
    metadata: {
      compactedMessages: 0,
      provider: "",
      model: "",
      preparedFor: q.mode,
      job: q.job,
      queuedAt: at,
      expiresAt: new Date(q.at.getTime() + q.ttlMs).toISOString(),
      ...(q.contextWindow !== undefined ? { contextWindow: q.contextWindow } : {}),
      ...(q.tokensBefore !== undefined ? { tokensBefore: q.tokensBefore } : {}),
      ...(q.foldUnit === "turn" ? { foldUnit: q.foldUnit } : {}),
      queuedAtVersion: q.version,
      ...(q.forced ? { forced: true } : {}),
      ...(q.instructions ? { instructions: q.instructions } : {}),
      ...(r ? { topicLabel: r.topicLabel, rangeFromAt: r.from, rangeToAt: r.to, inboxItemId: r.inboxItemId } : {}),
    },
    createdAt: at,
    supersededAt: null,
    tokens: 0,
  };
}

const summary = (f: SummaryFields) => ({
  content: f.content,
  tokens: f.tokens,
  citations: f.citations,
  droppedUnits: f.droppedUnits,
  ...(f.keepUnits ? { keepUnits: f.keepUnits } : {}),
  ...(keepsLedger(f.ledger) ? { ledger: f.ledger } : {}),
  ...(f.native ? { native: f.native } : {}),
});

/** The metadata of a summary's ledger: its section, when it has a ledger. */
const ledgerMetadata = (f: SummaryFields) => (keepsLedger(f.ledger) ? { ledger: f.ledgerSection } : {});

/** QUEUED -> PREPARED: the summary, what it covers and chains, and a new life of `ttlMs`. */
export function prepared(fold: Memory, s: SummaryParts & { fields: SummaryFields }, o: { mode: FoldTarget; ttlMs: number; extra: Partial<Metadata> }): Memory {
  return {
    ...fold,
    status: "PREPARED",
    ...summary(s.fields),
    sourceRefs: s.fold.map((m) => m.id),
    metadata: {
      ...fold.metadata,
      ...s.metadata,
      mode: o.mode,
      ...o.extra,
      loss: s.fields.loss,
      ...ledgerMetadata(s.fields),
      preparedAt: s.at.toISOString(),
      expiresAt: new Date(s.at.getTime() + o.ttlMs).toISOString(),
      ...(s.prior ? { supersededMemoryId: s.prior.id } : {}),
    },
  };
}

/** QUEUED -> FAILED: the summary failed; the row keeps what it tried to fold. */
export function failedQueued(fold: Memory, s: SummaryParts, o: { mode: FoldTarget; error: string; extra: Partial<Metadata> }): Memory {
  return { ...fold, status: "FAILED", sourceRefs: s.fold.map((m) => m.id), metadata: { ...fold.metadata, ...s.metadata, mode: o.mode, error: o.error, ...o.extra } };
}

/**
 * PREPARED -> PREPARED (extended): the summary now also covers `s.fold`, the union of sources in
 * the order of `order`; the loss report `lost` covers both parts; the chain is unchanged.
 */
export function extended(fold: Memory, s: SummaryParts & { fields: SummaryFields }, o: { sources: string[]; lost: Pick<SummaryFields, "loss" | "droppedUnits"> }): Memory {
  // The extension's block, if any, covers the prepared summary and the added messages: the old one goes.
  const { keepUnits: _keep, ledger: _ledger, native: _block, nativeBlob: _blob, ...base } = fold;
  const { ledger: _section, ...m } = fold.metadata;
  return {
    ...base,
    ...summary({ ...s.fields, ...o.lost }),
    sourceRefs: o.sources,
    metadata: {
      ...m,
      provider: s.metadata.provider,
      model: s.metadata.model,
      compactedMessages: o.sources.length,
      summarizerCalls: (m.summarizerCalls ?? 0) + (s.metadata.summarizerCalls ?? 0),
      ...(s.metadata.truncated || m.truncated ? { truncated: true } : {}),
      ...(s.metadata.providerFold ? { providerFold: s.metadata.providerFold } : {}),
      ...(o.lost.loss ? { loss: { ...o.lost.loss, ...(s.fields.loss?.ledger ? { ledger: s.fields.loss.ledger } : {}) } } : {}),
      ...ledgerMetadata(s.fields),
      extended: { messages: s.fold.length, at: s.at.toISOString() },
    },
  };
}

/** How a committed fold was made, as every commit records it. */
export interface CommitTag {
  mode: FoldTarget;
  producedBy: NonNullable<Metadata["producedBy"]>;
  tokensBefore: number;
}

const rowBase = (processId: string, fold: readonly Message[], at: Date) => ({
  processId,
  kind: "ARCHIVED_CHAT" as const,
  sourceRefs: fold.map((m) => m.id),
  createdAt: at.toISOString(),
  supersededAt: null,
});

/** (none, or QUEUED as `id`) -> OK: a fold summarized now, committed in the same run. */
export function committed(id: string, processId: string, s: SummaryParts & { fields: SummaryFields }, tag: CommitTag, extra: Partial<Metadata> = {}): Memory {
  return {
    ...rowBase(processId, s.fold, s.at),
    id,
    status: "OK",
    ...summary(s.fields),
    metadata: {
      ...s.metadata,
      mode: tag.mode,
      producedBy: tag.producedBy,
      ...extra,
      ...(s.prior ? { supersededMemoryId: s.prior.id } : {}),
      tokensBefore: tag.tokensBefore,
      loss: s.fields.loss,
      ...ledgerMetadata(s.fields),
    },
  };
}

/** (none) -> FAILED: a fold summarized now whose summary failed. */
export function failed(
  id: string,
  processId: string,
  s: SummaryParts,
  tag: Pick<CommitTag, "mode" | "producedBy">,
  o: { metadata: Partial<Metadata> | undefined; error: string; extra: Partial<Metadata> },
): Memory {
  return {
    ...rowBase(processId, s.fold, s.at),
    id,
    status: "FAILED",
    content: "",
    metadata: { ...s.metadata, mode: tag.mode, producedBy: tag.producedBy, ...o.metadata, error: o.error, ...o.extra },
    tokens: 0,
  };
}

/** PREPARED -> OK: committed as it was prepared, now, without its life or discard fields. */
export function fromPrepared(fold: Memory, at: Date, tag: CommitTag): Memory {
  const { expiresAt: _expires, discardReason: _reason, ...metadata } = fold.metadata;
  return { ...fold, status: "OK", createdAt: at.toISOString(), supersededAt: null, metadata: { ...metadata, ...tag } };
}

/** OK -> REVERTED: the undone summary, kept for audit. */
export function reverted(memory: Memory, at: string): Memory {
  return { ...memory, status: "REVERTED", metadata: { ...memory.metadata, revertedAt: at } };
}
