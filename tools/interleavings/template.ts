/**
 * Starting states copied, not rebuilt: a scenario builds its state once on a template process
 * with the real services, and every schedule starts from a copy of its items under a new process
 * id (one Query, one or two BatchWriteItem calls) instead of paying for the folds again. A copy is
 * the template's items with every string naming the template process (keys, `processId`) or one
 * of its inbox items renamed, so it is the same state, byte for byte, under other ids; its blobs
 * (content-addressed, so named by no process id) are put again under the copy.
 */
import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { inboxByProcess, processPk } from "../../core/adapters/dynamodb/keys.js";
import { tableIndexes } from "../../core/adapters/dynamodb/table.js";
import type { Scenario } from "./scenario.js";
import { newStage, type Stage, type World } from "./setup.js";

export interface Template {
  scenario: string;
  processId: string;
  items: Record<string, unknown>[];
  /** Inbox item ids of the template, renamed in every copy (they live in their own partitions). */
  inboxIds: string[];
  /** The template's blobs (native content's large parts), put again under every copy. */
  blobs: Array<{ sha256: string; bytes: Uint8Array }>;
  data: unknown;
}

async function queryAllItems(world: World, input: ConstructorParameters<typeof QueryCommand>[0]) {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await world.client.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }));
    items.push(...((out.Items ?? []) as Record<string, unknown>[]));
    start = out.LastEvaluatedKey as Record<string, unknown> | undefined;
  } while (start);
  return items;
}

/** Builds the scenario's state on a template process and reads every item of it back. */
export async function captureTemplate(world: World, scenario: Scenario): Promise<Template> {
  const stage = newStage(world, `${scenario.id}-tpl`);
  const data = await scenario.build(stage);
  const own = await queryAllItems(world, {
    TableName: world.tableName,
    KeyConditionExpression: "pk = :pk",
    ExpressionAttributeValues: { ":pk": processPk(stage.key) },
    ConsistentRead: true,
  });
  const inbox = await queryAllItems(world, {
    TableName: world.tableName,
    IndexName: tableIndexes.gsi2.name,
    KeyConditionExpression: "gsi2pk = :p",
    ExpressionAttributeValues: { ":p": inboxByProcess(stage.key.tenantId, stage.key.processId) },
  });
  const inboxIds = inbox.map((i) => (i.item as { id: string }).id);
  const blobs = await Promise.all(
    (await stage.blobs.list(stage.key)).map(async (sha256) => ({ sha256, bytes: (await stage.blobs.get(stage.key, sha256))! })),
  );
  return { scenario: scenario.id, processId: stage.key.processId, items: [...own, ...inbox], inboxIds, blobs, data };
}

/** Every string inside `value` with each `from` replaced by its `to` (objects and arrays copied). */
function renamed<T>(value: T, renames: ReadonlyArray<readonly [string, string]>): T {
  if (typeof value === "string") return renames.reduce<string>((s, [from, to]) => s.split(from).join(to), value) as T;
  if (Array.isArray(value)) return value.map((v) => renamed(v, renames)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renamed(v, renames)])) as T;
  }
  return value;
}

let copies = 0;

/** A new process holding a copy of the template, and the template's data renamed to it. */
export async function stageFromTemplate(world: World, template: Template): Promise<{ stage: Stage; data: unknown }> {
  const stage = newStage(world, template.scenario);
  const n = ++copies;
  const renames: Array<readonly [string, string]> = [
    [template.processId, stage.key.processId],
    ...template.inboxIds.map((id) => [id, `${id}x${n}`] as const),
  ];
  const items = template.items.map((i) => renamed(i, renames));
  for (let i = 0; i < items.length; i += 25) {
    let request: Record<string, unknown[]> | undefined = {
      [world.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
    };
    while (request && Object.keys(request).length > 0) {
      const out = await world.client.send(new BatchWriteCommand({ RequestItems: request as never }));
      request = out.UnprocessedItems as Record<string, unknown[]> | undefined;
    }
  }
  for (const b of template.blobs) await stage.blobs.put(stage.key, b.sha256, b.bytes);
  return { stage, data: renamed(template.data, renames) };
}
