/**
 * Building a scenario's starting state fast: one table for the whole run, a new process per
 * schedule, messages written in one BatchWriteItem, and folds, reverts and queued folds made by
 * the real services over a store that is not held. A "crashed" step runs over a store whose
 * roll-forward never happens: the commit applied, the caller died before finishing it, and META
 * still names the roll-forward (docs/compaction.md, "The commit protocol").
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { messageToItem } from "../../core/adapters/dynamodb/store.js";
import { createUlidIds } from "../../core/adapters/ids.js";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { messageTokens } from "../../core/domain/tokens.js";
import type { Ids } from "../../core/ports/clock.js";
import type { DomainEvent } from "../../core/ports/events.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { compactIfNeeded } from "../../core/services/compaction.js";
import type { CompactionSettings } from "../../core/services/compaction-settings.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { revertMemory } from "../../core/services/revert.js";
import { actorDeps } from "./actor-deps.js";

export const TENANT = "checker";
/** The model window of every scenario's turns and folds. */
export const WINDOW = 100_000;

/** The run's DynamoDB: one client and one table for every schedule. */
export interface World {
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** One schedule's process, and what its setup and actors share. */
export interface Stage {
  world: World;
  key: ProcessKey;
  ids: Ids;
  /** Events the actors and the setup published, in order. */
  events: DomainEvent[];
  /** Deps over the real (not held) client. */
  deps(execution?: CompactionSettings["execution"]): ServiceDeps;
  /** Deps whose roll-forward dies: a commit or revert applies and leaves its marker on META. */
  crashing(execution?: CompactionSettings["execution"]): ServiceDeps;
}

let sequence = 0;
const runTag = Date.now().toString(36);

/** A new process id (`<name>-<run>-<n>`) and its own id factory. */
export function newStage(world: World, name: string): Stage {
  const key = { tenantId: TENANT, processId: `${name}-${runTag}-${++sequence}` };
  const ids = createUlidIds();
  const events: DomainEvent[] = [];
  const deps = (execution: CompactionSettings["execution"] = "inline") => actorDeps({ client: world.client, tableName: world.tableName, ids, events, execution });
  return {
    world,
    key,
    ids,
    events,
    deps,
    crashing(execution) {
      const d = deps(execution);
      return { ...d, store: { ...d.store, finishPendingArchive: async () => ({ archived: 0 }) } };
    },
  };
}

export interface MessageSpec {
  role: Role;
  content: string;
  tags?: string[];
  toolCallId?: string;
  toolCalls?: ToolCall[];
}

/** `n` substantive messages (normal strength), alternating, the last one USER. */
export function chat(n: number, label = "note"): MessageSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    role: (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT",
    content: `${label} ${i}: column ${i} of the import is validated against the schema.`,
  }));
}

/** The process, and its first message (a pinned task) when it has none yet. */
export async function createProcess(stage: Stage): Promise<Message> {
  const deps = stage.deps();
  await deps.store.upsertProcess(TENANT, { processId: stage.key.processId, projectId: "proj" }, new Date().toISOString());
  const task = build(stage, { role: "USER", content: "Ship the billing importer by Friday.", tags: ["STRENGTH:pinned"] });
  const out = await deps.store.appendMessage(stage.key, task);
  if (!out.ok) throw new Error(`setup: process ${stage.key.processId} was not created`);
  return task;
}

function build(stage: Stage, spec: MessageSpec): Message {
  const at = new Date();
  const draft = {
    id: stage.ids.message(at),
    processId: stage.key.processId,
    role: spec.role,
    content: spec.content,
    tags: spec.tags ?? [],
    createdAt: at.toISOString(),
    archivedInMemoryId: null,
    ...(spec.toolCallId ? { toolCallId: spec.toolCallId } : {}),
    ...(spec.toolCalls ? { toolCalls: spec.toolCalls } : {}),
  };
  return { ...draft, tokens: messageTokens(draft) };
}

/** Writes the messages (after the first one: no META change needed) in batches of 25. */
export async function addMessages(stage: Stage, specs: readonly MessageSpec[]): Promise<Message[]> {
  const messages = specs.map((s) => build(stage, s));
  for (let i = 0; i < messages.length; i += 25) {
    const batch = messages.slice(i, i + 25).map((m) => ({ PutRequest: { Item: messageToItem(stage.key, m) } }));
    let request: Record<string, unknown[]> | undefined = { [stage.world.tableName]: batch };
    while (request && Object.keys(request).length > 0) {
      const out = await stage.world.client.send(new BatchWriteCommand({ RequestItems: request as never }));
      request = out.UnprocessedItems as Record<string, unknown[]> | undefined;
    }
  }
  return messages;
}

/** A forced HARD fold of what the selector allows; `crash`: its roll-forward is left to others. */
export async function fold(stage: Stage, options: { crash?: boolean; prompt?: number } = {}): Promise<string> {
  const deps = options.crash ? stage.crashing() : stage.deps();
  const out = await compactIfNeeded(deps, stage.key, { model: { contextWindow: WINDOW }, force: "HARD" });
  if (!out.compacted || !out.memoryId) throw new Error(`setup: the fold did not commit (${out.reason ?? "?"})`);
  return out.memoryId;
}

/** Undoes `memoryId`; `crash`: its restores past the transaction are left to others. */
export async function revert(stage: Stage, memoryId: string, options: { crash?: boolean } = {}) {
  await revertMemory(options.crash ? stage.crashing() : stage.deps(), stage.key, memoryId);
}
