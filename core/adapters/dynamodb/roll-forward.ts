/**
 * The archive roll-forward (docs/compaction.md, "The commit protocol"): what a fold or an undo did
 * not fit in its transaction, finished in transactions of up to `transactionLimit` items, each
 * guarded by META's marker and the memory's status (inputs in compaction-params.ts). Several
 * walkers may run at once, and one may stall at any point: each step is a compare-and-set of the
 * marker's index, so exactly one walker applies it and a stale one writes nothing.
 */
import type { Memory } from "../../domain/model.js";
import { originalsExpiry } from "../../domain/retention.js";
import type { ProcessKey, RollForwardResult } from "../../ports/store.js";
import { messageSk } from "./keys.js";
import { messageKey } from "./message-params.js";
import { batchGetAll } from "./paging.js";
import { archiveIntoOkParts, rollForwardParts, ROLL_FORWARD_GUARDS, type RollForwardPart } from "./compaction-params.js";
import { parseRollForwardMarker, type RollForwardDirection } from "./roll-forward-marker.js";
import { failedParts, type Part } from "./conditions.js";
import type { StoreContext } from "./context.js";
import type { MetaItem } from "./items.js";
import { readMeta } from "./process-store.js";

type Sent = { ok: true } | { ok: false; failed: Set<RollForwardPart> };

/** Sends a transaction; a cancelled one answers which named parts' conditions failed. */
async function send(ctx: StoreContext, parts: Part<RollForwardPart>[]): Promise<Sent> {
  try {
    await ctx.sendTransaction(parts);
    return { ok: true };
  } catch (e) {
    const failed = failedParts(e, parts);
    if (!failed) throw e;
    return { ok: false, failed: new Set(Object.keys(failed) as RollForwardPart[]) };
  }
}

const messagePart = (id: string): RollForwardPart => `message:${id}`;

/**
 * Finishes the roll-forward META's marker names, if it names `memory`, starting from the `meta`
 * just read. Returns how many messages this walker archived or restored itself, and the originals
 * its steps found not stored at all (a step goes on without them: what is there still moves).
 */
export async function rollForward(ctx: StoreContext, key: ProcessKey, memory: Memory, first: MetaItem | null): Promise<RollForwardResult> {
  const missing: string[] = [];
  const archived = await walk(ctx, key, memory, first, missing);
  return { archived, missing };
}

async function walk(ctx: StoreContext, key: ProcessKey, memory: Memory, first: MetaItem | null, missing: string[]): Promise<number> {
  const batch = ctx.transactionLimit - ROLL_FORWARD_GUARDS;
  const at = memory.createdAt;
  let meta = first;
  let moved = 0;
  for (;;) {
    if (!meta?.pendingArchive) return moved;
    const marker = meta.pendingArchive;
    const parsed = parseRollForwardMarker(marker);
    if (parsed.memoryId !== memory.id) return moved;
    // A marker from before directions existed follows the memory's status.
    const direction: RollForwardDirection = parsed.direction ?? (memory.status === "REVERTED" ? "restore" : "archive");
    const from = meta.pendingArchiveFrom ?? 0;
    const next = Math.min(from + batch, memory.sourceRefs.length);
    let ids = memory.sourceRefs.slice(from, next);
    const last = next >= memory.sourceRefs.length;
    const step = { marker, memoryId: memory.id, direction, from, next, last, at, expiresAtEpoch: originalsExpiry(memory) };
    for (;;) {
      const out = await send(ctx, rollForwardParts(ctx.tableName, key, { ...step, ids }));
      if (out.ok) {
        moved += ids.length;
        meta = step.last ? null : { ...meta, pendingArchiveFrom: next };
        break;
      }
      // The marker moved (another walker took this step, or an undo changed direction) or the
      // memory left the status this direction serves: read META again and go on from there.
      if (out.failed.has("process") || out.failed.has("memory")) {
        if (out.failed.has("memory") && !out.failed.has("process")) return moved;
        meta = await readMeta(ctx, key);
        break;
      }
      // Messages already in the target state (archived, or no longer archived here) need no write;
      // one not stored at all is named, never dropped in silence.
      const refused = ids.filter((id) => out.failed.has(messagePart(id)));
      missing.push(...(await notStored(ctx, key, refused)));
      ids = ids.filter((id) => !out.failed.has(messagePart(id)));
    }
  }
}

/** Which of `ids` have no stored message (strongly consistent reads). */
async function notStored(ctx: StoreContext, key: ProcessKey, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const found = await batchGetAll(ctx.client, ctx.tableName, ids.map((id) => messageKey(key, id)), ctx.retry);
  const stored = new Set(found.map((i) => String(i.sk)));
  return ids.filter((id) => !stored.has(messageSk(id)));
}

/**
 * Archives `ids` into `memoryId` while that memory is OK, in transactions of up to
 * `transactionLimit` items; a message already archived is skipped. Nothing is written once the
 * memory is no longer OK (an undo restored them).
 */
export async function archiveIntoOk(ctx: StoreContext, key: ProcessKey, ids: readonly string[], memoryId: string, at: string, expiresAtEpoch?: number) {
  const archived: string[] = [];
  const skipped: string[] = [];
  const batch = ctx.transactionLimit - 1;
  for (let i = 0; i < ids.length; i += batch) {
    let chunk = ids.slice(i, i + batch);
    for (;;) {
      const out = await send(ctx, archiveIntoOkParts(ctx.tableName, key, memoryId, chunk, at, expiresAtEpoch));
      if (out.ok) {
        archived.push(...chunk);
        break;
      }
      if (out.failed.has("memory")) {
        skipped.push(...ids.slice(i));
        return { archived, skipped };
      }
      skipped.push(...chunk.filter((id) => out.failed.has(messagePart(id))));
      chunk = chunk.filter((id) => !out.failed.has(messagePart(id)));
      if (chunk.length === 0) break;
    }
  }
  return { archived, skipped };
}
