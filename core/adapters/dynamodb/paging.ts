/**
 * Reading more than one page: the SDK's paginators for every Query and BatchGetItem loop, the
 * adapters' backoff between BatchGetItem retries, and the opaque cursors of paged listings.
 */
import {
  paginatedBatchGet,
  paginateQuery,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { invalid } from "../../domain/errors.js";
import { backoff, type BackoffOptions, type BackoffPolicy } from "../backoff.js";

/** Keys in one BatchGetItem request (DynamoDB's limit). */
export const BATCH_GET_LIMIT = 100;
/** Retries of a BatchGetItem's unprocessed keys (throttling), and how long to wait between them. */
export const BATCH_GET_ATTEMPTS = 8;
const BATCH_GET_BACKOFF: BackoffPolicy = { baseMs: 50, capMs: 2_000 };

export function encodeCursor(key: Record<string, unknown> | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString("base64url") : undefined;
}

/** DynamoDB's largest sort key value (the partition key's is 2048), in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;

/**
 * Cursors are opaque to callers; one that does not belong to this listing is a 400. The HTTP
 * layer signs them (core/adapters/http/cursors.ts); this check stands behind it: the start key
 * must have exactly the listing's key attributes (`keys`), as non-empty strings DynamoDB can hold,
 * its partition (`attr` = `value`) and, for a listing of one kind of item, its sort key within
 * that kind (`sortPrefix`), so a forged key is a 400, never DynamoDB's refusal of a start key
 * outside the Query's range (a 500).
 */
export function decodeCursor(
  cursor: string | undefined,
  listing: { attr: string; value: string; keys: readonly string[]; sortPrefix?: { attr: string; prefix: string } },
): Record<string, unknown> | undefined {
  if (!cursor) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid("cursor.invalid", "cursor is not valid", { fields: ["query.cursor"] });
  }
  const key = (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : {}) as Record<string, unknown>;
  const names = Object.keys(key);
  const fits =
    names.length === listing.keys.length &&
    listing.keys.every((k) => typeof key[k] === "string" && key[k] !== "" && Buffer.byteLength(key[k] as string) <= MAX_KEY_BYTES) &&
    key[listing.attr] === listing.value &&
    (!listing.sortPrefix || (key[listing.sortPrefix.attr] as string).startsWith(listing.sortPrefix.prefix));
  if (!fits) throw invalid("cursor.invalid", "cursor is not valid for this listing", { fields: ["query.cursor"] });
  return key;
}

/** Every item a Query matches, page after page, and the read capacity it consumed. */
export async function queryAll(client: DynamoDBDocumentClient, input: QueryCommandInput) {
  const items: Record<string, unknown>[] = [];
  let consumed = 0;
  for await (const page of paginateQuery({ client }, { ...input, ReturnConsumedCapacity: "TOTAL" })) {
    items.push(...(page.Items ?? []));
    consumed += page.ConsumedCapacity?.CapacityUnits ?? 0;
  }
  return { items, consumed };
}

/**
 * Every item of `keys` that exists (strongly consistent), in requests of at most 100 keys.
 * Unprocessed keys mean throttling: only they are asked for again, after a growing, jittered
 * wait, at most BATCH_GET_ATTEMPTS times per request.
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: Record<string, unknown>[],
  options: BackoffOptions = {},
): Promise<Record<string, unknown>[]> {
  const pause = backoff(BATCH_GET_BACKOFF, options);
  const found: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_LIMIT) {
    const request = { [tableName]: { Keys: keys.slice(i, i + BATCH_GET_LIMIT), ConsistentRead: true } };
    let attempt = 0;
    for await (const page of paginatedBatchGet({ client }, { RequestItems: request })) {
      attempt++;
      found.push(...(page.Responses?.[tableName] ?? []));
      if (!Object.keys(page.UnprocessedKeys ?? {}).length) continue;
      if (attempt >= BATCH_GET_ATTEMPTS) {
        throw new Error(`BatchGetItem left keys unprocessed after ${BATCH_GET_ATTEMPTS} attempts (throttled)`);
      }
      await pause(attempt);
    }
  }
  return found;
}
