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
import { expireAgain, keepOriginals } from "./revert-retention.js";
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

    async revertCompaction(key, revert) {
      const plan = revertCompactionParts(tableName, key, revert, ctx.transactionLimit);
      const expiry = revert.originalsExpireAtEpoch;
      const restoredNow = plan.parts.filter(([name]) => name === "archive").length;
      const later = plan.pendingArchive && expiry !== undefined ? revert.restoreIds.slice(restoredNow) : [];
      // Safe from the TTL before the commit (revert-retention.ts); given back if it does not commit.
      const kept = later.length === 0 || (await keepOriginals(ctx, key, revert, later));
      const out = kept ? await commitOrConflict(plan) : ({ ok: false, reason: "conflict" } as const);
      if (!out.ok && later.length > 0) await expireAgain(ctx, key, revert.memoryId, later, expiry!);
      return out;
    },

    async finishPendingArchive(key, memoryId) {
      const [meta, memory] = await Promise.all([readMeta(ctx, key), readMemory(ctx, key, memoryId)]);
      if (!memory) return { archived: 0, missing: [] };
      return rollForward(ctx, key, memory, meta);
    },
  };
}
