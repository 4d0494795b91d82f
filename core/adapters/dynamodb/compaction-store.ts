/**
 * The commit protocol's port (docs/compaction.md, "The commit protocol"): the lease on META, the
 * commit and undo transactions, and the roll-forward of archives that did not fit one (inputs in
 * compaction-params.ts).
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { CompactionStore } from "../../ports/store.js";
import {
  acquireLeaseParams,
  clearPendingArchiveParams,
  commitCompactionParts,
  releaseLeaseParams,
  revertCompactionParts,
} from "./compaction-params.js";
import { conditionHolds, failedItem, failedParts, isConditionFailure } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { MetaItem } from "./items.js";
import { readMemory } from "./memory-store.js";
import { archiveEach, restoreEach } from "./message-store.js";
import { readMeta } from "./process-store.js";

export function createCompactionStore(ctx: StoreContext): CompactionStore {
  const { client, tableName, sendTransaction } = ctx;
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

    async commitCompaction(key, commit) {
      const { parts, pendingArchive } = commitCompactionParts(tableName, key, commit);
      try {
        await sendTransaction(parts);
        return { ok: true, pendingArchive };
      } catch (e) {
        // Cancelled (a guard failed, or conflicts outlasted the retries): nothing was written.
        if (failedParts(e, parts)) return { ok: false, reason: "conflict" };
        throw e;
      }
    },

    async revertCompaction(key, revert) {
      const { parts, pendingArchive } = revertCompactionParts(tableName, key, revert);
      try {
        await sendTransaction(parts);
        return { ok: true, pendingArchive };
      } catch (e) {
        if (failedParts(e, parts)) return { ok: false, reason: "conflict" };
        throw e;
      }
    },

    async finishPendingArchive(key, memoryId) {
      const [meta, memory] = await Promise.all([readMeta(ctx, key), readMemory(ctx, key, memoryId)]);
      if (!meta || meta.pendingArchive !== memoryId || !memory) return { archived: 0 };
      const rest = memory.sourceRefs.slice(meta.pendingArchiveFrom ?? 0);
      const archived =
        memory.status === "REVERTED"
          ? (await restoreEach(ctx, key, rest, memoryId)).restored
          : (await archiveEach(ctx, key, rest, memoryId, memory.createdAt)).archived;
      // False: another caller finished the same roll-forward first.
      await conditionHolds(() => client.send(new UpdateCommand(clearPendingArchiveParams(tableName, key, memoryId))));
      return { archived: archived.length };
    },
  };
}
