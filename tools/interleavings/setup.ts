/**
 * Building a scenario's starting state: messages written in one BatchWriteItem, and folds,
 * reverts and queued folds made by the real services over a store that is not held. A "crashed"
 * step runs in a container that dies right after its commit or undo transaction applied: every
 * later store call fails, so META still names the roll-forward it did not do (docs/compaction.md,
 * "The commit protocol"). The state is built once per scenario and copied for every schedule
 * (template.ts).
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { messageToItem } from "../../core/adapters/dynamodb/store.js";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { createUlidIds } from "../../core/adapters/ids.js";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { messageTokens } from "../../core/domain/tokens.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { Ids } from "../../core/ports/clock.js";
import type { DomainEvent } from "../../core/ports/events.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import type { CompactionConfig } from "../../core/services/deps.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
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
  /**
   * The blob store of native content's large parts (in memory, one per stage: DynamoDB items are
   * copied from a template, its blobs too, template.ts). Every actor and the checks share it.
   */
  blobs: BlobStore;
  /** Deps over the real (not held) client. */
  deps(execution?: CompactionConfig["execution"]): ServiceDeps;
  /**
   * Deps of a container that dies once a commit or undo transaction applied: every later store
   * call throws {@link Crash}, and `committed` names the memory of that transaction.
   */
  crashing(): { deps: ServiceDeps; committed: () => string | undefined };
}

/** What a crashed container's store calls throw after its transaction applied. */
export class Crash extends Error {
  constructor() {
    super("the container crashed after its transaction");
  }
}

let sequence = 0;
const runTag = Date.now().toString(36);

/** A new process id (`<name>-<run>-<n>`) and its own id factory. */
export function newStage(world: World, name: string): Stage {
  const key = { tenantId: TENANT, processId: `${name}-${runTag}-${++sequence}` };
  const ids = createUlidIds();
  const events: DomainEvent[] = [];
  const blobs = createMemoryBlobStore();
  const deps = (execution: CompactionConfig["execution"] = "inline") => actorDeps({ client: world.client, tableName: world.tableName, ids, events, execution, blobs });
  return {
    world,
    key,
    ids,
    events,
    blobs,
    deps,
    crashing() {
      const d = deps();
      let committed: string | undefined;
      const store = new Proxy(d.store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== "function") return value;
          return async (...args: unknown[]) => {
            if (committed) throw new Crash();
            const out = await value.apply(target, args);
            if ((property === "commitCompaction" || property === "revertCompaction") && (out as { ok: boolean }).ok) {
              const arg = args[1] as { memory?: { id: string }; memoryId?: string };
              committed = arg.memory?.id ?? arg.memoryId;
            }
            return out;
          };
        },
      });
      return { deps: { ...d, store }, committed: () => committed };
    },
  };
}

export interface MessageSpec {
  role: Role;
  content: string;
  tags?: string[];
  toolCallId?: string;
  toolCalls?: ToolCall[];
  /** Its creation time (default now): a range compaction selects by it. */
  at?: Date;
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
  const at = spec.at ?? new Date();
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

/** Runs `step` in a container that dies right after its transaction; answers the memory it committed. */
async function crashing(stage: Stage, step: (deps: ServiceDeps) => Promise<unknown>): Promise<string> {
  const { deps, committed } = stage.crashing();
  try {
    await step(deps);
  } catch (e) {
    if (!(e instanceof Crash)) throw e;
  }
  const id = committed();
  if (!id) throw new Error("setup: the crashing step committed nothing");
  return id;
}

/** A forced HARD fold of what the selector allows; `crash`: its committer dies right after the transaction. */
export async function fold(stage: Stage, options: { crash?: boolean } = {}): Promise<string> {
  const force = (deps: ServiceDeps) => compactIfNeeded(deps, stage.key, { model: { contextWindow: WINDOW }, force: "HARD" });
  if (options.crash) return crashing(stage, force);
  const out = await force(stage.deps());
  if (!out.compacted || !out.memoryId) throw new Error(`setup: the fold did not commit (${out.reason ?? "?"})`);
  return out.memoryId;
}

/** Undoes `memoryId`; `crash`: the reverting container dies right after its transaction. */
export async function revert(stage: Stage, memoryId: string, options: { crash?: boolean } = {}) {
  if (options.crash) await crashing(stage, (deps) => revertMemory(deps, stage.key, memoryId));
  else await revertMemory(stage.deps(), stage.key, memoryId);
}
