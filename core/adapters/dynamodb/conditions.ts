/**
 * Condition expressions from small named fragments, and what a failed condition tells us. Each
 * fragment carries its own placeholders, so a write states its guard by name
 * (`when(versionIs(3), leaseFree(now))`) instead of restating the expression by hand; the commit
 * protocol they guard is in docs/compaction.md ("The commit protocol").
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type * as z from "../../domain/zod.js";
import type { MemoryStatus } from "../../domain/model.js";
import type { LastTurn } from "../../domain/last-turn.js";
import { readItem } from "./items.js";

/** One clause of a condition (or update) expression with the placeholders it uses. */
export interface Fragment {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/**
 * Where META keeps the revert hold (docs/compaction.md, "Undoing a compaction") and the last turn's
 * record (docs/turns.md, "The last turn's record"): `metadata.revertHoldTokens` and
 * `metadata.lastTurn`, in a map whose name the replay index already projects (an index's
 * projection cannot change once the table exists), so a turn sees both in its one Query. Every
 * META the service creates has the map; one written before the record existed gets it from the
 * first turn that records (process-store.ts), and nothing removes it but an erasure.
 */
export const REVERT_HOLD_MAP = "metadata";
export const REVERT_HOLD_ATTRIBUTE = "revertHoldTokens";
export const LAST_TURN_ATTRIBUTE = "lastTurn";
/** Sets the last turn's record in META's map (which must be there: {@link metaMapExists}). */
export const recordTurnSet = (record: LastTurn): Fragment => ({
  expression: "#md.#lt = :lt",
  names: { "#md": REVERT_HOLD_MAP, "#lt": LAST_TURN_ATTRIBUTE },
  values: { ":lt": record },
});
/** META's map is there, so a write may set one entry of it. */
export const metaMapExists: Fragment = { expression: "attribute_exists(#md)", names: { "#md": REVERT_HOLD_MAP } };
const STATUS = { "#status": "status" };

export const exists = (attribute: string): Fragment => ({ expression: `attribute_exists(${attribute})` });
export const absent = (attribute: string): Fragment => ({ expression: `attribute_not_exists(${attribute})` });

/** The item is there (the key attribute is always set on a stored item). */
export const itemExists = (key: "pk" | "sk" = "sk") => exists(key);
/** Nothing is stored under the key yet. */
export const itemIsNew = (key: "pk" | "sk" = "sk") => absent(key);

// META: the deletion tombstone, versions, leases and the roll-forward marker.
/**
 * Where META records a deletion (docs/api.md, "Deleting a process"): set once by the delete and
 * never removed, so every write guarded by {@link processLive} or {@link notDeleted} fails from
 * then on and nothing brings the process back.
 */
export const DELETED_AT = "deletedAt";
/** META carries no deletion tombstone (true on a missing item too: pair it with an existence check). */
export const notDeleted = absent(DELETED_AT);
/** META carries the deletion tombstone. */
export const isDeleted = exists(DELETED_AT);
/** The process exists and is not deleted: the guard on META of every write for a process. */
export const processLive: Fragment = { expression: `attribute_exists(pk) AND attribute_not_exists(${DELETED_AT})` };
export const versionIs = (version: number): Fragment => ({ expression: "version = :v", values: { ":v": version } });
/** No live lease: never taken, or expired before `now`. */
export const leaseFree = (now: string): Fragment => ({
  expression: "(attribute_not_exists(leaseUntil) OR leaseUntil < :now)",
  values: { ":now": now },
});
export const leaseHeldBy = (owner: string): Fragment => ({ expression: "leaseOwner = :o", values: { ":o": owner } });
/** An automatic compaction may fold again only once the replay grew past the recorded hold. */
export const revertHoldAtMost = (replayTokens: number): Fragment => ({
  expression: "(attribute_not_exists(#md.#hold) OR #md.#hold <= :rt)",
  names: { "#md": REVERT_HOLD_MAP, "#hold": REVERT_HOLD_ATTRIBUTE },
  values: { ":rt": replayTokens },
});
export const noPendingArchive = absent("pendingArchive");
/** META's roll-forward marker is exactly `marker` (memory and direction, see rollForwardMarker). */
export const pendingArchiveIs = (marker: string): Fragment => ({
  expression: "pendingArchive = :pm",
  values: { ":pm": marker },
});
/** The roll-forward has reached index `from` of the memory's sourceRefs. */
export const pendingArchiveFromIs = (from: number): Fragment => ({
  expression: "pendingArchiveFrom = :pfrom",
  values: { ":pfrom": from },
});

// Messages.
export const notArchived = absent("archivedInMemoryId");
export const archivedInto = (memoryId: string): Fragment => ({
  expression: "archivedInMemoryId = :m",
  values: { ":m": memoryId },
});
export const tagsAre = (tags: string[]): Fragment => ({ expression: "tags = :old", values: { ":old": tags } });
/** Active: still carries the replay index key. */
export const inReplay = exists("lsi1sk");
export const notCleared = absent("cleared");

// Memories and inbox items (both keep a `status` attribute).
export const statusIs = (status: MemoryStatus | "OPEN"): Fragment => ({
  expression: "#status = :is",
  names: STATUS,
  values: { ":is": status },
});
export const notSuperseded = absent("supersededAt");
export const supersededBy = (memoryId: string): Fragment => ({
  expression: "supersededByMemoryId = :m",
  values: { ":m": memoryId },
});

/** Joins placeholder maps; one placeholder bound to two different values is a bug, caught here. */
function merge<V>(target: Record<string, V>, source: Record<string, V> | undefined) {
  for (const [k, v] of Object.entries(source ?? {})) {
    if (k in target && JSON.stringify(target[k]) !== JSON.stringify(v)) {
      throw new Error(`placeholder ${k} bound twice (${JSON.stringify(target[k])}, ${JSON.stringify(v)})`);
    }
    target[k] = v;
  }
}

/** Expression attribute maps, left out when empty (DynamoDB rejects an empty map). */
export function placeholders(fragments: readonly (Fragment | undefined)[]) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  for (const f of fragments) {
    merge(names, f?.names);
    merge(values, f?.values);
  }
  return {
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

/** The parts of a write input that express its guard: `ConditionExpression` plus placeholders. */
export function when(...all: Fragment[]) {
  return { ConditionExpression: all.map((f) => f.expression).join(" AND "), ...placeholders(all) };
}

/**
 * A write input with an optional update and a guard: placeholders of both are merged. Pure, so
 * tests assert the whole input.
 */
export function guarded<T extends object>(input: T, update: Fragment | undefined, ...condition: Fragment[]) {
  return {
    ...input,
    ...(update ? { UpdateExpression: update.expression } : {}),
    ...(condition.length ? { ConditionExpression: condition.map((f) => f.expression).join(" AND ") } : {}),
    ...placeholders([update, ...condition]),
  };
}

export const isConditionFailure = (e: unknown): e is ConditionalCheckFailedException =>
  e instanceof ConditionalCheckFailedException;

/**
 * The item a failed single-item condition saw (ReturnValuesOnConditionCheckFailure: ALL_OLD),
 * parsed with its schema; null when there was no item.
 */
export function failedItem<S extends z.ZodMiniType>(e: ConditionalCheckFailedException, schema: S): z.infer<S> | null {
  const raw = (e as { Item?: Record<string, never> }).Item;
  return raw ? readItem(schema, unmarshall(raw)) : null;
}

/** One write of a transaction, under the name its cancellation reason is reported by. */
export type Part<N extends string> = readonly [name: N, write: TransactItem];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TransactItem = Record<string, any>;

/** What a cancelled transaction says about one named part whose condition failed. */
export interface PartFailure {
  /** The item the condition saw (ALL_OLD), unparsed until the caller names its schema. */
  item: Record<string, unknown> | null;
}

/**
 * The parts of a cancelled transaction whose conditions failed, by name (DynamoDB reports one
 * reason per item, in request order). Null when `e` is not a cancellation.
 */
export function failedParts<N extends string>(
  e: unknown,
  parts: readonly Part<N>[],
): Partial<Record<N, PartFailure>> | null {
  if (!(e instanceof TransactionCanceledException)) return null;
  const reasons = e.CancellationReasons ?? [];
  const failed: Partial<Record<N, PartFailure>> = {};
  parts.forEach(([name], i) => {
    const reason = reasons[i];
    if (reason?.Code !== "ConditionalCheckFailed") return;
    failed[name] = { item: reason.Item ? unmarshall(reason.Item as never) : null };
  });
  return failed;
}

/**
 * Sends a transaction whose failed conditions are an expected answer: false then, true when it was
 * applied; any other error is rethrown (the transactional {@link conditionHolds}).
 */
export async function transactionHolds<P extends readonly Part<string>[]>(send: (parts: P) => Promise<unknown>, parts: P): Promise<boolean> {
  try {
    await send(parts);
    return true;
  } catch (e) {
    if (!failedParts(e, parts)) throw e;
    return false;
  }
}

/**
 * Sends a conditional write whose failed condition is an expected answer: false then, true when
 * it was applied; any other error is rethrown.
 */
export async function conditionHolds(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
    return false;
  }
}
