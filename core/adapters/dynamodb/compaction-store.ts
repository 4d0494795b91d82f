/**
 * The commit protocol's port (docs/compaction.md, "The commit protocol"): the lease on META, the
 * commit and undo transactions, and the roll-forward of archives that did not fit one (inputs in
 * compaction-params.ts).
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { CompactionStore } from "../../ports/store.js";
import {
  acquireLeaseParams,
  commitCompactionParts,
  releaseLeaseParams,
  revertCompactionParts,
  type CommitPart,
} from "./compaction-params.js";
import { conditionHolds, failedItem, failedParts, isConditionFailure, type Part } from "./conditions.js";
import { rollForward } from "./roll-forward.js";
import type { StoreContext } from "./context.js";
import { MetaItem } from "./items.js";
import { readMemory } from "./memory-store.js";
import { readMeta } from "./process-store.js";

export function createCompactionStore(ctx: StoreContext): CompactionStore {
  const { client, tableName, sendTransaction } = ctx;

  /** Sends a commit or undo transaction; a cancelled one is a conflict and wrote nothing. */
  async function commitOrConflict({ parts, pendingArchive }: { parts: Part<CommitPart>[]; pendingArchive: boolean }) {
    try {
      await sendTransaction(parts);
      return { ok: true as const, pendingArchive };
    } catch (e) {
      // Cancelled (a guard failed, or conflicts outlasted the retries): the state moved under the lease.
      if (failedParts(e, parts)) return { ok: false as const, reason: "conflict" as const };
      throw e;
    }
  }

  return {
    async acquireLease(key, lease) {
      try {
        await client.send(new UpdateCommand(acquireLeaseParams(tableName, key, lease)));
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const old = failedItem(e, MetaItem);
        if (!old) return { ok: false, reason: "not_found" };
        if (old.version !== lease.expectedVersion) return { ok: false, reason: "version_changed" };
        const leased = old.leaseUntil !== undefined && old.leaseUntil >= lease.now;
        return { ok: false, reason: leased ? "leased" : "revert_hold" };
      }
    },

    async releaseLease(key, owner) {
      // False: someone else's lease (ours expired and was taken), left alone.
      await conditionHolds(() => client.send(new UpdateCommand(releaseLeaseParams(tableName, key, owner))));
    },

    commitCompaction: (key, commit) => commitOrConflict(commitCompactionParts(tableName, key, commit, ctx.transactionLimit)),

    revertCompaction: (key, revert) => commitOrConflict(revertCompactionParts(tableName, key, revert, ctx.transactionLimit)),

    async finishPendingArchive(key, memoryId) {
      const [meta, memory] = await Promise.all([readMeta(ctx, key), readMemory(ctx, key, memoryId)]);
      if (!memory) return { archived: 0 };
      return { archived: await rollForward(ctx, key, memory, meta) };
    },
  };
}
