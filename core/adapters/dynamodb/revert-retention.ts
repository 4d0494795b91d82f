/**
 * A revert that a retention cannot outrun (docs/compaction.md, "Undoing a compaction"): the
 * originals its transaction does not restore are restored later by a roll-forward, perhaps days
 * later by whichever reader comes next. Before the transaction, under the revert's lease, those
 * originals lose their TTL attribute, so the late restore finds every one of them. Should the
 * transaction not commit, they get their expiry back.
 */
import { UpdateCommand, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { ProcessKey, RevertCommit } from "../../ports/store.js";
import { archivedInto, failedParts, guarded, leaseHeldBy, notSuperseded, processLive, statusIs, versionIs, when, type Part } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { META_SK, TTL_ATTRIBUTE, memorySk, processPk } from "./keys.js";
import { messageKey } from "./message-params.js";

type KeepPart = "process" | "memory" | `message:${string}`;

/**
 * One batch: META still at the version the revert read, under its lease; the memory still the OK
 * head; each original still archived into it, its TTL removed.
 */
export function keepOriginalsParts(tableName: string, key: ProcessKey, r: RevertCommit, ids: readonly string[]): Part<KeepPart>[] {
  return [
    ["process", { ConditionCheck: { TableName: tableName, Key: { pk: processPk(key), sk: META_SK }, ...when(processLive, versionIs(r.expectedVersion), leaseHeldBy(r.leaseOwner)) } }],
    ["memory", { ConditionCheck: { TableName: tableName, Key: { pk: processPk(key), sk: memorySk(r.memoryId) }, ...when(statusIs("OK"), notSuperseded) } }],
    ...ids.map((id): Part<KeepPart> => [`message:${id}`, { Update: ttlUpdate(tableName, key, id, r.memoryId) }]),
  ];
}

/** The original's TTL set (`epoch`) or removed, only while it is archived into `memoryId`. */
export function ttlUpdate(tableName: string, key: ProcessKey, id: string, memoryId: string, epoch?: number): UpdateCommandInput {
  return guarded(
    { TableName: tableName, Key: messageKey(key, id) },
    epoch === undefined
      ? { expression: "REMOVE #ttl", names: { "#ttl": TTL_ATTRIBUTE } }
      : { expression: "SET #ttl = :exp", names: { "#ttl": TTL_ATTRIBUTE }, values: { ":exp": epoch } },
    archivedInto(memoryId),
  );
}

/** Removes the TTL of `ids` in guarded batches; false as soon as a guard fails (the revert will not commit as read). */
export async function keepOriginals(ctx: StoreContext, key: ProcessKey, r: RevertCommit, ids: readonly string[]): Promise<boolean> {
  const batch = ctx.transactionLimit - 2;
  for (let i = 0; i < ids.length; i += batch) {
    const parts = keepOriginalsParts(ctx.tableName, key, r, ids.slice(i, i + batch));
    try {
      await ctx.sendTransaction(parts);
    } catch (e) {
      if (failedParts(e, parts)) return false;
      throw e;
    }
  }
  return true;
}

/** Gives `ids` their expiry back where they are still archived into the memory (a revert that did not commit). */
export async function expireAgain(ctx: StoreContext, key: ProcessKey, memoryId: string, ids: readonly string[], epoch: number): Promise<void> {
  for (const id of ids) {
    await ctx.client.send(new UpdateCommand(ttlUpdate(ctx.tableName, key, id, memoryId, epoch))).catch((e: unknown) => {
      if (!(e instanceof Error && e.name === "ConditionalCheckFailedException")) throw e;
    });
  }
}
