/**
 * How much of DynamoDB's 400 KB an item takes. On a table with a local secondary index the limit
 * holds for the item plus its index entry: an item on the replay index (lsi1, see table.ts) pays
 * for every projected attribute twice, so an active message's content can be only about half of
 * 400 KB. The message limit (MAX_MESSAGE_BYTES in core/domain/fields.ts, docs/configuration.md, "Limits") is
 * derived from this in test/unit/message-size.test.ts; an item that still does not fit is refused
 * by DynamoDB, and {@link isItemSizeError} recognises that refusal so it never becomes a 500.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { itemTooLarge } from "../../domain/errors.js";
import { tableIndexes } from "./table.js";

/** DynamoDB's item size limit (1 KB = 1024 bytes), for the item and its local index entries. */
export const ITEM_LIMIT_BYTES = 400 * 1024;
/** What DynamoDB's documentation counts per index entry besides its attributes. */
const INDEX_ENTRY_OVERHEAD_BYTES = 100;

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/** A number: one byte per two significant digits, plus one (DynamoDB's documented estimate). */
function numberBytes(n: number): number {
  const digits = String(Math.abs(n))
    .replace(/e.*$/i, "")
    .replace(".", "")
    .replace(/^0+/, "")
    .replace(/0+$/, "");
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** One attribute value: strings in UTF-8 bytes; lists and maps 3 bytes plus 1 per element. */
function valueBytes(value: unknown): number {
  if (typeof value === "string") return utf8(value);
  if (typeof value === "number") return numberBytes(value);
  if (typeof value === "boolean" || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + valueBytes(v), 0);
  if (typeof value === "object") return 3 + attributesBytes(value as Record<string, unknown>, 1);
  throw new Error(`no DynamoDB size for a ${typeof value}`);
}

/** Names and values of a map's (or an item's) defined attributes, `perElement` extra bytes each. */
function attributesBytes(attributes: Record<string, unknown>, perElement = 0): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) bytes += perElement + utf8(name) + valueBytes(value);
  }
  return bytes;
}

/** The item alone: the UTF-8 bytes of every attribute name plus the size of its value. */
export const itemBytes = (item: Record<string, unknown>): number => attributesBytes(item);

const REPLAY_INDEX_ATTRIBUTES = new Set<string>(["pk", "sk", tableIndexes.lsi1.sortKey, ...tableIndexes.lsi1.nonKeyAttributes]);

/**
 * What the item counts against the 400 KB limit: itself plus, while it is on the replay index, its
 * index entry (the table's keys, the index key, the projected attributes and the documented
 * overhead). DynamoDB Local counts a little less (no table sort key, no overhead); this is the
 * documented, larger figure, so what fits here fits in both.
 */
export function storedBytes(item: Record<string, unknown>): number {
  const own = itemBytes(item);
  if (item[tableIndexes.lsi1.sortKey] === undefined) return own;
  const projected = Object.fromEntries(Object.entries(item).filter(([name]) => REPLAY_INDEX_ATTRIBUTES.has(name)));
  return own + itemBytes(projected) + INDEX_ENTRY_OVERHEAD_BYTES;
}

const SIZE_REFUSAL = /item size (?:to update )?has exceeded the maximum allowed size/i;

/**
 * DynamoDB's refusal of an item past the limit, from a Put, an Update ("Item size to update has
 * exceeded ...") or a transaction holding either (refused whole, or cancelled for that item).
 */
export function isItemSizeError(e: unknown): boolean {
  if (e instanceof TransactionCanceledException) {
    return (e.CancellationReasons ?? []).some((r) => r.Code === "ValidationError" && SIZE_REFUSAL.test(r.Message ?? ""));
  }
  return e instanceof Error && e.name === "ValidationException" && SIZE_REFUSAL.test(e.message);
}

/** Runs one write; DynamoDB's item-size refusal comes back as the store's `itemTooLarge` (core/domain/errors.ts). */
export async function sizeChecked<T>(what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    throw isItemSizeError(e) ? itemTooLarge(`${what} does not fit DynamoDB's 400 KB item limit (with its index entry)`, e) : e;
  }
}
