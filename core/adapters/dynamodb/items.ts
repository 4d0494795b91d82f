/**
 * One zod schema per stored item type. Every read is parsed through these, never cast; the
 * converters turn a saved item into the domain shape and back.
 */
import * as z from "../../domain/zod.js";
import { AppError } from "../../domain/errors.js";
import { InboxItem, Memory, Message, Process, setStoredNative, storedNative } from "../../domain/model.js";
import type { StoredNative } from "../../domain/native/blob-parts.js";
import { blobOfStored, storedBlock } from "../../domain/native/memory-block.js";
import { LastTurn } from "../../domain/last-turn.js";
import type { ProcessKey, ProcessState } from "../../ports/store.js";
import { expiryToEpoch, expiryToIso } from "../../domain/retention.js";
import { parseRollForwardMarker } from "./roll-forward-marker.js";
import {
  TTL_ATTRIBUTE,
  activeMemoryKey,
  activeMessageKey,
  memorySk,
  messageSk,
  pendingFoldKey,
  processPk,
} from "./keys.js";

const keys = { pk: z.string(), sk: z.string(), lsi1sk: z.optional(z.string()) };

/**
 * Parses an item read from the table. An item that does not match its schema is the service's
 * fault, not the caller's: an `internal` error (500) whose message carries the item's key and
 * the failing fields for the log, and which the HTTP layer never shows to the caller.
 */
export function readItem<S extends z.ZodMiniType>(schema: S, raw: unknown): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const item = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const key = { pk: String(item.pk), sk: String(item.sk) };
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(item)"}: ${i.message}`);
  throw new AppError("internal", "store.item_invalid", `stored item ${key.pk} / ${key.sk} does not parse: ${issues.join("; ")}`, {
    ...key,
    problems: issues,
  });
}

/**
 * META: the process (core/domain/model.ts) plus the compaction bookkeeping of docs/compaction.md
 * ("The commit protocol"): version, lease, active summary, roll-forward marker.
 */
export const MetaItem = z.extend(Process, {
  ...keys,
  type: z.literal("META"),
  tenantId: z.string(),
  version: z.int(),
  activeSummaryId: z.optional(z.string()),
  leaseOwner: z.optional(z.string()),
  leaseUntil: z.optional(z.string()),
  pendingArchive: z.optional(z.string()),
  pendingArchiveFrom: z.optional(z.int()),
  firstUserMessageId: z.optional(z.string()),
  /** The revert hold and the last turn's record (see REVERT_HOLD_MAP in conditions.ts). */
  metadata: z.optional(
    z.object({
      revertHoldTokens: z.optional(z.number()),
      lastTurn: z.optional(LastTurn),
      /** The replay epoch and why it last moved (docs/turns.md, "Append-only between folds"). */
      replayEpoch: z.optional(z.int()),
      replayReason: z.optional(z.enum(["fold", "revert"])),
    }),
  ),
  /** The engine's `system` and `tools` as JSON text, kept exactly (never on the replay index: a fold reads it). */
  conversation: z.optional(z.string()),
  /** The token of an import not yet live (import-store.ts): such a process is hidden from every reader. */
  importing: z.optional(z.string()),
  /** The deletion tombstone (erasure-params.ts): set once, never removed. */
  deletedAt: z.optional(z.string()),
  deletion: z.optional(z.enum(["DELETING", "DELETED"])),
});
export type MetaItem = z.infer<typeof MetaItem>;

/**
 * A message as stored: `archivedInMemoryId` is absent rather than null while it is active,
 * `missingResult` is never stored (only a replay adds it), and `expiresAt` is stored as the
 * table's TTL attribute (epoch seconds), which only an archived original under a retention carries.
 */
export const MessageItem = z.extend(z.omit(Message, { archivedInMemoryId: true, missingResult: true, expiresAt: true, native: true }), {
  ...keys,
  type: z.literal("MSG"),
  /**
   * The native content as kept (core/domain/native/blob-parts.ts), as JSON text: a string keeps
   * every value exactly, at any depth, where a DynamoDB map would not.
   */
  native: z.optional(z.string()),
  archivedInMemoryId: z.optional(z.string()),
  archivedAt: z.optional(z.string()),
  [TTL_ATTRIBUTE]: z.optional(z.number()),
});
export type MessageItem = z.infer<typeof MessageItem>;

/** A memory as stored: `supersededAt` is absent rather than null while it is not superseded. */
export const MemoryItem = z.extend(z.omit(Memory, { nativeBlob: true }), {
  ...keys,
  type: z.literal("MEM"),
  supersededAt: z.optional(z.string()),
  /**
   * A provider fold's block as JSON text, kept exactly like a message's native content: the block
   * itself, or past the inline size its stored form naming one blob (`nativeBlob`), so that a
   * replay index read learns of it with no other attribute.
   */
  native: z.optional(z.string()),
});
export type MemoryItem = z.infer<typeof MemoryItem>;

export const IdempotencyItem = z.object({
  ...keys,
  type: z.literal("IDEM"),
  messageId: z.string(),
  /** sha256 of the body the key came with (absent on records written before it was kept). */
  bodyHash: z.optional(z.string()),
});

export const InboxRecord = z.object({
  ...keys,
  type: z.literal("INBOX"),
  tenantId: z.string(),
  item: InboxItem,
  status: InboxItem.shape.status,
});

export const SettingsItem = z.object({
  ...keys,
  type: z.literal("SETTINGS"),
  settings: z.record(z.string(), z.unknown()),
  updatedAt: z.string(),
});

/**
 * Projects a parsed item onto the fields `domain` declares, in the domain's order, with
 * `overrides` for the fields stored differently; absent optional fields stay absent. The item was
 * parsed on read, so its fields already have the domain's types.
 */
function projection<D extends z.ZodMiniObject>(domain: D) {
  const fields = Object.keys(domain.shape);
  return (item: object, overrides: Partial<z.infer<D>> = {}): z.infer<D> => {
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      const value = field in overrides ? overrides[field as keyof typeof overrides] : (item as Record<string, unknown>)[field];
      if (value !== undefined) out[field] = value;
    }
    return out as z.infer<D>;
  };
}
const processFields = projection(Process);
const messageFields = projection(Message);
const memoryFields = projection(Memory);

export const toProcess = (m: MetaItem): Process =>
  processFields(m, { conversation: m.conversation !== undefined ? (JSON.parse(m.conversation) as Process["conversation"]) : undefined });

export const toMessage = (i: MessageItem): Message => {
  const expires = i[TTL_ATTRIBUTE];
  const message: Message = messageFields(i, {
    archivedInMemoryId: i.archivedInMemoryId ?? null,
    expiresAt: expires !== undefined ? expiryToIso(expires) : undefined,
    native: undefined,
  });
  return i.native !== undefined ? setStoredNative(message, JSON.parse(i.native) as StoredNative) : message;
};

export const toMemory = (i: MemoryItem): Memory =>
  memoryFields(i, {
    supersededAt: i.supersededAt ?? null,
    // An empty id never names a memory.
    supersededByMemoryId: i.supersededByMemoryId || undefined,
    ...memoryBlock(i.native),
  });

/** The memory's block from the item's `native` text: the block, or the blob its stored form names. */
function memoryBlock(text: string | undefined): Pick<Memory, "native" | "nativeBlob"> {
  if (text === undefined) return { native: undefined, nativeBlob: undefined };
  const parsed = JSON.parse(text) as Memory["native"] & Partial<StoredNative>;
  return parsed.blobs ? { native: undefined, nativeBlob: blobOfStored(parsed as StoredNative) } : { native: parsed, nativeBlob: undefined };
}

/** A queued or prepared fold: read with the replay, never replayed. */
export const isPendingFold = (m: Pick<Memory, "status">) => m.status === "QUEUED" || m.status === "PREPARED";

/**
 * The stored message: on the replay index while active, pointing at its memory once archived (with
 * the TTL attribute when it has an expiry: an archived original imported from an export).
 */
export function messageToItem(key: ProcessKey, m: Message): MessageItem {
  const { archivedInMemoryId, missingResult: _replayOnly, expiresAt, native: _answerOnly, ...fields } = m;
  const stored = storedNative(m);
  return readItem(MessageItem, {
    pk: processPk(key),
    sk: messageSk(m.id),
    ...(archivedInMemoryId === null
      ? { lsi1sk: activeMessageKey(m.id) }
      : { archivedInMemoryId, ...(expiresAt !== undefined ? { [TTL_ATTRIBUTE]: expiryToEpoch(expiresAt) } : {}) }),
    type: "MSG",
    ...fields,
    ...(stored ? { native: JSON.stringify(stored) } : {}),
  });
}

/**
 * The stored memory: the active summary and pending folds are on the replay index (a fold under
 * its own prefix, never replayed). A queued or prepared fold also gets the TTL attribute.
 */
export function memoryToItem(key: ProcessKey, m: Memory): MemoryItem {
  const active = m.status === "OK" && m.supersededAt === null;
  const pending = isPendingFold(m);
  const expires = pending && m.metadata.expiresAt ? Math.ceil(Date.parse(m.metadata.expiresAt) / 1000) : undefined;
  const item = readItem(MemoryItem, {
    pk: processPk(key),
    sk: memorySk(m.id),
    ...(active ? { lsi1sk: activeMemoryKey(m.id) } : pending ? { lsi1sk: pendingFoldKey(m.id) } : {}),
    type: "MEM",
    ...m,
    supersededAt: m.supersededAt ?? undefined,
    nativeBlob: undefined,
    native: m.nativeBlob ? JSON.stringify(storedBlock(m.nativeBlob)) : m.native !== undefined ? JSON.stringify(m.native) : undefined,
  });
  // DynamoDB's TTL deletes a queued or prepared fold nobody used; not part of the item schema
  // (the replay index does not project it: turns read metadata.expiresAt).
  return expires !== undefined ? ({ ...item, [TTL_ATTRIBUTE]: expires } as MemoryItem) : item;
}

/** The process state a META item records (lease only when both of its fields are set). */
export const toState = (meta: MetaItem): ProcessState => ({
  process: toProcess(meta),
  version: meta.version,
  activeSummaryId: meta.activeSummaryId ?? null,
  lease: meta.leaseOwner && meta.leaseUntil ? { owner: meta.leaseOwner, until: meta.leaseUntil } : null,
  pendingArchive: meta.pendingArchive ? parseRollForwardMarker(meta.pendingArchive).memoryId : null,
  hasUserMessage: meta.firstUserMessageId !== undefined,
  ...(meta.metadata?.revertHoldTokens !== undefined ? { revertHoldTokens: meta.metadata.revertHoldTokens } : {}),
  ...(meta.metadata?.lastTurn ? { lastTurn: meta.metadata.lastTurn } : {}),
  replayEpoch: meta.metadata?.replayEpoch ?? 0,
  ...(meta.metadata?.replayReason ? { replayReason: meta.metadata.replayReason } : {}),
});

/** A memory as the replay index returns it: without `sourceRefs`, which it does not project. */
export const ReplayMemoryItem = z.extend(MemoryItem, { sourceRefs: z._default(z.array(z.string()), []) });

/**
 * Parses a raw item of the replay index by its `type`, so one Query can hold several item types.
 * Memories read this way carry no `sourceRefs` (see REPLAY_PROJECTION in table.ts).
 */
export function parseItem(raw: Record<string, unknown>) {
  switch (raw.type) {
    case "META":
      return { type: "META" as const, item: readItem(MetaItem, raw) };
    case "MSG":
      return { type: "MSG" as const, item: readItem(MessageItem, raw) };
    case "MEM":
      return { type: "MEM" as const, item: readItem(ReplayMemoryItem, raw) };
    default:
      throw new AppError("internal", "store.item_invalid", `unexpected item type ${String(raw.type)} at ${String(raw.pk)} / ${String(raw.sk)}`);
  }
}
