/**
 * The one table's shape, shared by the local runner, the tests and the SST stack so that all
 * three create the same key schema and indexes.
 *
 * - pk/sk: item collection per process (`T#<tenant>#P#<process>`), see keys.ts.
 * - lsi1 (sparse, ConsistentRead-capable): `lsi1sk` is set only on items in the replay
 *   (META `A#0`, active messages `A#M#<id>`, the active summary `A#S#<id>`). It projects every
 *   attribute a turn reads, but not a summary's `sourceRefs`: a fold of 1,000 messages would
 *   otherwise add ~8 RCU to every later turn.
 * - gsi1: tenant-wide listings (processes newest first, inbox items).
 * - gsi2: processes of one project.
 */
export const tableAttributes = [
  { name: "pk", type: "S" },
  { name: "sk", type: "S" },
  { name: "lsi1sk", type: "S" },
  { name: "gsi1pk", type: "S" },
  { name: "gsi1sk", type: "S" },
  { name: "gsi2pk", type: "S" },
  { name: "gsi2sk", type: "S" },
] as const;

/**
 * The non-key attributes the replay index carries: every attribute of the META, message and
 * memory items except `sourceRefs`, `citations`, `droppedUnits`, `keepUnits` and `ledger` (the replayed
 * section of the ledger is in `metadata`), which only folds, the inspector and
 * `GET .../memories/{id}` read (a unit test keeps this list in step with the item schemas).
 */
export const REPLAY_PROJECTION = [
  "type",
  // META
  "tenantId",
  "processId",
  "projectId",
  "sessionId",
  "parentProcessId",
  "name",
  "recipe",
  "engine",
  "title",
  "allowsCrossProjectSpawn",
  "createdAt",
  "version",
  "activeSummaryId",
  "leaseOwner",
  "leaseUntil",
  "pendingArchive",
  "pendingArchiveFrom",
  "firstUserMessageId",
  // messages
  "id",
  "role",
  "content",
  "tags",
  "archivedInMemoryId",
  "archivedAt",
  "toolCallId",
  "toolCalls",
  "tokens",
  "cleared",
  "native",
  "toolCallIds",
  // memories
  "kind",
  "status",
  "metadata",
  "supersededAt",
  "supersededByMemoryId",
] as const;

export const tableIndexes = {
  lsi1: { name: "lsi1", sortKey: "lsi1sk", nonKeyAttributes: REPLAY_PROJECTION },
  gsi1: { name: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk" },
  gsi2: { name: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk" },
} as const;
