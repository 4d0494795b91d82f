/**
 * Pure DynamoDB inputs of the process aggregate (the META item) and of the tunables settings.
 * Nothing here sends: tests assert the whole input.
 */
import type { GetCommandInput, PutCommandInput, QueryCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { ListOptions, ProcessInput, ProcessKey } from "../../ports/store.js";
import {
  META_ACTIVE,
  META_SK,
  processListSk,
  processPk,
  processesByProject,
  processesByTenant,
  settingsPk,
  settingsSk,
} from "./keys.js";
import { REVERT_HOLD_MAP, guarded, metaMapExists, notDeleted, processLive, recordTurnSet, when } from "./conditions.js";
import type { LastTurn } from "../../domain/last-turn.js";
import { decodeCursor } from "./paging.js";
import { tableIndexes } from "./table.js";

/** Process fields a PUT may leave out; leaving one out removes it. */
const OPTIONAL_PROCESS_FIELDS = ["sessionId", "parentProcessId", "name", "recipe", "engine", "title"] as const;

/** Strongly consistent read of a process's META item. */
export const getMetaParams = (tableName: string, key: ProcessKey): GetCommandInput => ({
  TableName: tableName,
  Key: { pk: processPk(key), sk: META_SK },
  ConsistentRead: true,
});

/**
 * Creates or replaces a process (PUT semantics), keeping what only the service writes: createdAt,
 * version, the listing sort keys and the compaction bookkeeping.
 */
export function upsertProcessParams(tableName: string, tenantId: string, input: ProcessInput, at: string): UpdateCommandInput {
  const set: string[] = [
    "#type = :type",
    "tenantId = :tenant",
    "processId = :pid",
    "projectId = :project",
    "allowsCrossProjectSpawn = :cross",
    "createdAt = if_not_exists(createdAt, :now)",
    "version = if_not_exists(version, :zero)",
    "lsi1sk = :active",
    "gsi1pk = :g1pk",
    "gsi1sk = if_not_exists(gsi1sk, :listSk)",
    "gsi2pk = :g2pk",
    "gsi2sk = if_not_exists(gsi2sk, :listSk)",
    // META's map (conditions.ts, REVERT_HOLD_MAP): there from the start, so a turn can record itself in it.
    "#md = if_not_exists(#md, :map)",
  ];
  const remove: string[] = [];
  const names: Record<string, string> = { "#type": "type", "#md": REVERT_HOLD_MAP };
  const values: Record<string, unknown> = {
    ":type": "META",
    ":tenant": tenantId,
    ":pid": input.processId,
    ":project": input.projectId,
    ":cross": input.allowsCrossProjectSpawn ?? false,
    ":now": at,
    ":zero": 0,
    ":active": META_ACTIVE,
    ":g1pk": processesByTenant(tenantId),
    ":g2pk": processesByProject(tenantId, input.projectId),
    ":listSk": processListSk(at, input.processId),
    ":map": {},
  };
  // The conversation is JSON text: a DynamoDB map would not keep every value exactly.
  names["#conversation"] = "conversation";
  if (input.conversation !== undefined) {
    set.push("#conversation = :conversation");
    values[":conversation"] = JSON.stringify(input.conversation);
  } else remove.push("#conversation");
  for (const f of OPTIONAL_PROCESS_FIELDS) {
    names[`#${f}`] = f;
    if (input[f] !== undefined) {
      set.push(`#${f} = :${f}`);
      values[`:${f}`] = input[f];
    } else remove.push(`#${f}`);
  }
  return {
    TableName: tableName,
    Key: { pk: processPk({ tenantId, processId: input.processId }), sk: META_SK },
    UpdateExpression: `SET ${set.join(", ")}${remove.length ? ` REMOVE ${remove.join(", ")}` : ""}`,
    // A deleted process is never brought back (docs/api.md, "Deleting a process").
    ...when(notDeleted),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: "ALL_NEW",
  };
}

const metaKey = (key: ProcessKey) => ({ pk: processPk(key), sk: META_SK });

/** The last turn's record, on a live process whose META has its map. */
export const recordTurnParams = (tableName: string, key: ProcessKey, record: LastTurn): UpdateCommandInput => {
  const set = recordTurnSet(record);
  return guarded({ TableName: tableName, Key: metaKey(key) }, { ...set, expression: `SET ${set.expression}` }, processLive, metaMapExists);
};

/** META's map, added to a META written before the map was. */
export const addMetaMapParams = (tableName: string, key: ProcessKey): UpdateCommandInput =>
  guarded({ TableName: tableName, Key: metaKey(key) }, { expression: "SET #md = if_not_exists(#md, :map)", names: { "#md": REVERT_HOLD_MAP }, values: { ":map": {} } }, processLive);

/** One page of a tenant's processes (gsi1) or one project's (gsi2), newest first. */
export function listProcessesParams(
  tableName: string,
  tenantId: string,
  { limit, cursor, projectId }: ListOptions & { projectId?: string },
): QueryCommandInput {
  const index = projectId ? tableIndexes.gsi2 : tableIndexes.gsi1;
  const pkValue = projectId ? processesByProject(tenantId, projectId) : processesByTenant(tenantId);
  return {
    TableName: tableName,
    IndexName: index.name,
    KeyConditionExpression: "#pk = :pk",
    ExpressionAttributeNames: { "#pk": index.partitionKey },
    ExpressionAttributeValues: { ":pk": pkValue },
    ScanIndexForward: false,
    Limit: limit,
    ExclusiveStartKey: decodeCursor(cursor, { attr: index.partitionKey, value: pkValue, keys: ["pk", "sk", index.partitionKey, index.sortKey] }),
  };
}

export const getSettingsParams = (tableName: string, tenantId: string, projectId?: string): GetCommandInput => ({
  TableName: tableName,
  Key: { pk: settingsPk(tenantId), sk: settingsSk(projectId) },
  ConsistentRead: true,
});

/** Settings are replaced whole: the service validated the merged result before. */
export const putSettingsParams = (
  tableName: string,
  tenantId: string,
  projectId: string | undefined,
  settings: Record<string, unknown>,
  at: string,
): PutCommandInput => ({
  TableName: tableName,
  Item: { pk: settingsPk(tenantId), sk: settingsSk(projectId), type: "SETTINGS", settings, updatedAt: at },
});
