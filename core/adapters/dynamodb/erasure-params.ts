/**
 * Pure DynamoDB inputs of deleting a process (docs/api.md, "Deleting a process"): the tombstone
 * on META, the reads that find what is left to erase, and the tombstone's final form. Nothing
 * here sends: tests assert the whole input.
 */
import type { DeleteCommandInput, PutCommandInput, QueryCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import { TENANT_ERASURE_MARK_DAYS, type ProcessKey } from "../../ports/store.js";
import { DELETED_AT, guarded, IMPORTING, isDeleted, processNotDeleted } from "./conditions.js";
import { META_SK, processPk, TENANT_ERASED_SK, TTL_ATTRIBUTE, unlistedProcesses, usagePk } from "./keys.js";
import { indexPageParams } from "./process-params.js";
import { tableIndexes } from "./table.js";

/** META's `deletion` attribute: erasing (`DELETING`) until every other item is gone, then `DELETED`. */
export const DELETION = "deletion";
export type DeletionMark = "DELETING" | "DELETED";

const metaKey = (key: ProcessKey) => ({ pk: processPk(key), sk: META_SK });

/**
 * The tombstone, once: `deletedAt` (which every write's guard on META refuses from now on), the
 * version bumped (a lease granted or an index cached for the old version is stale), and META out
 * of the replay index and the listings, with its lease, roll-forward marker and import token gone,
 * so a fold's commit or roll-forward, or an import's next batch, that was in flight fails on its
 * condition. Until the erasure is done, META stays in the tenant's unlisted processes, where a
 * tenant's erasure finds a deletion that stopped half way.
 */
export const markDeletedParams = (tableName: string, key: ProcessKey, at: string): UpdateCommandInput =>
  guarded(
    { TableName: tableName, Key: metaKey(key), ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
    {
      expression:
        "SET #deletedAt = :at, #deletion = :deleting, version = version + :one, gsi1pk = :unlisted, gsi1sk = if_not_exists(gsi1sk, :at) " +
        "REMOVE lsi1sk, gsi2pk, gsi2sk, leaseOwner, leaseUntil, pendingArchive, pendingArchiveFrom, #importing",
      names: { "#deletedAt": DELETED_AT, "#deletion": DELETION, "#importing": IMPORTING },
      values: { ":at": at, ":deleting": "DELETING" satisfies DeletionMark, ":one": 1, ":unlisted": unlistedProcesses(key.tenantId) },
    },
    processNotDeleted,
  );

/** One page of the keys in the process's partition (META included), strongly consistent. */
export const partitionKeysParams = (
  tableName: string,
  key: ProcessKey,
  limit: number,
  start?: Record<string, unknown>,
): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: "pk = :pk",
  ExpressionAttributeValues: { ":pk": processPk(key) },
  ProjectionExpression: "pk, sk",
  ConsistentRead: true,
  Limit: limit,
  ...(start ? { ExclusiveStartKey: start } : {}),
});

/** Every key of one partition (a tenant's settings or usage), strongly consistent. */
export const partitionParams = (tableName: string, pk: string): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: "pk = :pk",
  ExpressionAttributeValues: { ":pk": pk },
  ProjectionExpression: "pk, sk",
  ConsistentRead: true,
});

export const deleteItemParams = (tableName: string, item: { pk: string; sk: string }): DeleteCommandInput => ({
  TableName: tableName,
  Key: { pk: item.pk, sk: item.sk },
});

/** The process fields META keeps no longer once erased: what the caller wrote and what the service kept about its messages. */
const ERASED_META_FIELDS = [
  "sessionId",
  "parentProcessId",
  "name",
  "recipe",
  "engine",
  "title",
  "firstUserMessageId",
  "activeSummaryId",
  "metadata",
] as const;

/**
 * The tombstone's final form, once nothing else of the process is left: `DELETED`, out of the
 * unlisted processes, with the caller's fields gone; only the ids, the project and the dates remain, so the deletion can be
 * answered and the id is never taken again.
 */
export const finishDeletionParams = (tableName: string, key: ProcessKey): UpdateCommandInput =>
  guarded(
    { TableName: tableName, Key: metaKey(key) },
    {
      expression: `SET #deletion = :deleted REMOVE gsi1pk, gsi1sk, ${ERASED_META_FIELDS.map((f) => `#${f}`).join(", ")}`,
      names: { "#deletion": DELETION, ...Object.fromEntries(ERASED_META_FIELDS.map((f) => [`#${f}`, f])) },
      values: { ":deleted": "DELETED" satisfies DeletionMark },
    },
    isDeleted,
  );

/** The tenant's erasure mark: refuses its model usage (usage-params.ts) until its TTL. */
export const tenantErasedParams = (tableName: string, tenantId: string, at: string): PutCommandInput => ({
  TableName: tableName,
  Item: {
    pk: usagePk(tenantId),
    sk: TENANT_ERASED_SK,
    type: "ERASED",
    erasedAt: at,
    [TTL_ATTRIBUTE]: Math.floor(Date.parse(at) / 1000) + TENANT_ERASURE_MARK_DAYS * 86_400,
  },
});

/** One page of the tenant's unlisted processes (gsi1): imports not yet live, deletions not finished. */
export const unlistedProcessesParams = (tableName: string, tenantId: string, limit: number, cursor?: string): QueryCommandInput =>
  indexPageParams(tableName, tableIndexes.gsi1, unlistedProcesses(tenantId), limit, cursor);
