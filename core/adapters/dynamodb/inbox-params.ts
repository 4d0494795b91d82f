/**
 * Pure DynamoDB inputs of the inbox: each item in its own partition (an answer needs only its id),
 * listed per tenant on gsi1 and per process on gsi2. Nothing here sends: tests assert the whole input.
 */
import type { GetCommandInput, QueryCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { InboxItem, InboxStatus } from "../../domain/model.js";
import { absent, guarded, itemExists, itemIsNew, processLive, statusIs, when, type Part } from "./conditions.js";
import { INBOX_REF_PREFIX, INBOX_SK, META_SK, inboxByProcess, inboxByTenant, inboxListSk, inboxPk, inboxRefSk, processPk } from "./keys.js";
import { tableIndexes } from "./table.js";

/**
 * Written once per id (a second put sees the first: ALL_OLD), and only while the item's process
 * is live, so no offer appears for a deleted process (docs/api.md, "Deleting a process"); with it,
 * its pointer in the process's partition, where a deletion finds it.
 */
export const putInboxItemParts = (tableName: string, tenantId: string, item: InboxItem): Part<"process" | "item" | "ref">[] => [
  [
    "process",
    {
      ConditionCheck: {
        TableName: tableName,
        Key: { pk: processPk({ tenantId, processId: item.processId }), sk: META_SK },
        ...when(processLive),
      },
    },
  ],
  [
    "item",
    {
      Put: {
        TableName: tableName,
        Item: {
          pk: inboxPk(tenantId, item.id),
          sk: INBOX_SK,
          type: "INBOX",
          tenantId,
          item,
          status: item.status,
          gsi1pk: inboxByTenant(tenantId),
          gsi1sk: inboxListSk(item.createdAt, item.id),
          gsi2pk: inboxByProcess(tenantId, item.processId),
          gsi2sk: inboxListSk(item.createdAt, item.id),
        },
        ...when(itemIsNew("pk")),
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    },
  ],
  [
    "ref",
    {
      Put: {
        TableName: tableName,
        Item: { pk: processPk({ tenantId, processId: item.processId }), sk: inboxRefSk(item.id), type: "INBOXREF", inboxPk: inboxPk(tenantId, item.id) },
      },
    },
  ],
];

/** The process's pointers to its inbox items (strongly consistent): the items' keys are in `inboxPk`. */
export const inboxRefsParams = (tableName: string, tenantId: string, processId: string): QueryCommandInput => ({
  TableName: tableName,
  KeyConditionExpression: "pk = :pk AND begins_with(sk, :ref)",
  ExpressionAttributeValues: { ":pk": processPk({ tenantId, processId }), ":ref": INBOX_REF_PREFIX },
  ProjectionExpression: "inboxPk",
  ConsistentRead: true,
});

export const getInboxItemParams = (tableName: string, tenantId: string, itemId: string): GetCommandInput => ({
  TableName: tableName,
  Key: { pk: inboxPk(tenantId, itemId), sk: INBOX_SK },
  ConsistentRead: true,
});

/** A tenant's items (gsi1) or one process's (gsi2), newest first, optionally of one status. */
export function listInboxParams(tableName: string, tenantId: string, { processId, status }: { processId?: string; status?: InboxStatus }): QueryCommandInput {
  const index = processId ? tableIndexes.gsi2 : tableIndexes.gsi1;
  return {
    TableName: tableName,
    IndexName: index.name,
    KeyConditionExpression: "#pk = :pk",
    ExpressionAttributeNames: { "#pk": index.partitionKey, ...(status ? { "#status": "status" } : {}) },
    ExpressionAttributeValues: {
      ":pk": processId ? inboxByProcess(tenantId, processId) : inboxByTenant(tenantId),
      ...(status ? { ":status": status } : {}),
    },
    ...(status ? { FilterExpression: "#status = :status" } : {}),
    ScanIndexForward: false,
  };
}

/** OPEN -> ACCEPTED/DECLINED once; the stored copy of the item's status follows. */
export const answerInboxItemParams = (
  tableName: string,
  tenantId: string,
  itemId: string,
  status: "ACCEPTED" | "DECLINED",
  at: string,
): UpdateCommandInput =>
  guarded(
    { TableName: tableName, Key: { pk: inboxPk(tenantId, itemId), sk: INBOX_SK }, ReturnValues: "ALL_NEW", ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
    {
      expression: "SET #status = :s, #item.#status = :s, #item.answeredAt = :at",
      names: { "#status": "status", "#item": "item" },
      values: { ":s": status, ":at": at },
    },
    itemExists("pk"),
    statusIs("OPEN"),
  );

/** The item's range job, recorded once: a second claim fails and sees the first (ALL_OLD). */
export const claimRangeJobParams = (tableName: string, tenantId: string, itemId: string, jobId: string): UpdateCommandInput =>
  guarded(
    { TableName: tableName, Key: { pk: inboxPk(tenantId, itemId), sk: INBOX_SK }, ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
    { expression: "SET #item.rangeJobId = :j", names: { "#item": "item" }, values: { ":j": jobId } },
    itemExists("pk"),
    { ...absent("#item.rangeJobId"), names: { "#item": "item" } },
  );
