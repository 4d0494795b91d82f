/**
 * One zod schema per stored item type. Every read is parsed through these, never cast; the
 * converters turn a saved item into the domain shape and back.
 */
import * as z from "zod";
import { AppError } from "../../domain/errors.js";
import { ClearedResult, InboxItem, LossUnit, Memory, MemoryMetadata, MemoryStatus, Message, Process, Role, ToolCall } from "../../domain/model.js";

const keys = { pk: z.string(), sk: z.string(), lsi1sk: z.string().optional() };

/**
 * Parses an item read from the table. An item that does not match its schema is the service's
 * fault, not the caller's: an `internal` error (500) whose message carries the item's key and
 * the failing fields for the log, and which the HTTP layer never shows to the caller.
 */
export function readItem<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const item = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const key = { pk: String(item.pk), sk: String(item.sk) };
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(item)"}: ${i.message}`);
  throw new AppError("internal", "store.item_invalid", `stored item ${key.pk} / ${key.sk} does not parse: ${issues.join("; ")}`, {
    ...key,
    issues,
  });
}

export const MetaItem = z.object({
  ...keys,
  type: z.literal("META"),
  tenantId: z.string(),
  processId: z.string(),
  projectId: z.string(),
  sessionId: z.string().optional(),
  parentProcessId: z.string().optional(),
  name: z.string().optional(),
  recipe: z.string().optional(),
  engine: z.string().optional(),
  title: z.string().optional(),
  allowsCrossProjectSpawn: z.boolean(),
  createdAt: z.string(),
  version: z.number().int(),
  activeSummaryId: z.string().optional(),
  leaseOwner: z.string().optional(),
  leaseUntil: z.string().optional(),
  pendingArchive: z.string().optional(),
  pendingArchiveFrom: z.number().int().optional(),
  firstUserMessageId: z.string().optional(),
});
export type MetaItem = z.infer<typeof MetaItem>;

export const MessageItem = z.object({
  ...keys,
  type: z.literal("MSG"),
  id: z.string(),
  processId: z.string(),
  role: Role,
  content: z.string(),
  tags: z.array(z.string()),
  createdAt: z.string(),
  archivedInMemoryId: z.string().optional(),
  archivedAt: z.string().optional(),
  toolCallId: z.string().optional(),
  toolCalls: z.array(ToolCall).optional(),
  tokens: z.number().int(),
  cleared: ClearedResult.optional(),
});
export type MessageItem = z.infer<typeof MessageItem>;

export const MemoryItem = z.object({
  ...keys,
  type: z.literal("MEM"),
  id: z.string(),
  processId: z.string(),
  kind: z.literal("ARCHIVED_CHAT"),
  status: MemoryStatus,
  content: z.string(),
  sourceRefs: z.array(z.string()),
  metadata: MemoryMetadata,
  createdAt: z.string(),
  supersededAt: z.string().optional(),
  supersededByMemoryId: z.string().optional(),
  tokens: z.number().int(),
  citations: z.array(z.array(z.string())).optional(),
  droppedUnits: z.array(LossUnit).optional(),
  keepUnits: z.array(z.string()).optional(),
});
export type MemoryItem = z.infer<typeof MemoryItem>;

export const IdempotencyItem = z.object({
  ...keys,
  type: z.literal("IDEM"),
  messageId: z.string(),
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

export const toProcess = (m: MetaItem): Process =>
  readItem(Process, {
    processId: m.processId,
    projectId: m.projectId,
    sessionId: m.sessionId,
    parentProcessId: m.parentProcessId,
    name: m.name,
    recipe: m.recipe,
    engine: m.engine,
    title: m.title,
    allowsCrossProjectSpawn: m.allowsCrossProjectSpawn,
    createdAt: m.createdAt,
  });

export const toMessage = (i: MessageItem): Message => ({
  id: i.id,
  processId: i.processId,
  role: i.role,
  content: i.content,
  tags: i.tags,
  createdAt: i.createdAt,
  archivedInMemoryId: i.archivedInMemoryId ?? null,
  ...(i.toolCallId !== undefined ? { toolCallId: i.toolCallId } : {}),
  ...(i.toolCalls !== undefined ? { toolCalls: i.toolCalls } : {}),
  tokens: i.tokens,
  ...(i.cleared !== undefined ? { cleared: i.cleared } : {}),
});

export const toMemory = (i: MemoryItem): Memory => ({
  id: i.id,
  processId: i.processId,
  kind: i.kind,
  status: i.status,
  content: i.content,
  sourceRefs: i.sourceRefs,
  metadata: i.metadata,
  createdAt: i.createdAt,
  supersededAt: i.supersededAt ?? null,
  ...(i.supersededByMemoryId ? { supersededByMemoryId: i.supersededByMemoryId } : {}),
  tokens: i.tokens,
  ...(i.citations ? { citations: i.citations } : {}),
  ...(i.droppedUnits ? { droppedUnits: i.droppedUnits } : {}),
  ...(i.keepUnits ? { keepUnits: i.keepUnits } : {}),
});

/** A memory as the replay index returns it: without `sourceRefs`, which it does not project. */
export const ReplayMemoryItem = MemoryItem.extend({ sourceRefs: z.array(z.string()).default([]) });

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
