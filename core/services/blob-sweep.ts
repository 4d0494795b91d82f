/**
 * The sweep of a process's blobs that no live message or memory names (docs/configuration.md, "Retention"):
 * DynamoDB's TTL removes an expired original's item, never the blobs of its native content, so
 * they stay until the process is deleted or this sweep runs. A blob any message still kept names
 * (active, or archived and not past its retention) is never deleted, whatever else names it.
 */
import { AppError } from "../domain/errors.js";
import { storedNative } from "../domain/model.js";
import { keepsBlockBlob } from "../domain/native/memory-block.js";
import { isExpired } from "../domain/retention.js";
import type { ProcessKey } from "../ports/store.js";
import type { CoreDeps } from "./deps.js";
import { requireProcess } from "./processes.js";

export interface BlobSweep {
  /** Blobs stored under the process when the sweep began. */
  listed: number;
  /** Of those, blobs a kept message names (kept). */
  kept: number;
  /** The shas deleted (with `dryRun`: that would be). */
  deleted: string[];
  /** Deleted, then named by a message written meanwhile, and so put back. */
  restored: string[];
}

/** Messages per store read while the names are collected. */
const READ_MESSAGES = 500;

/**
 * Every blob sha a message kept at `now` names, read through every page of the history, and every
 * one a memory's block is kept in: a summary's, a reverted one's (kept for audit), a prepared
 * fold's; not a discarded or failed fold's, which no replay reads.
 */
async function namedBlobs(deps: CoreDeps, key: ProcessKey, now: Date): Promise<Set<string>> {
  const named = new Set<string>();
  for (const m of await deps.store.listMemories(key)) {
    if (m.nativeBlob && keepsBlockBlob(m)) named.add(m.nativeBlob.sha256);
  }
  let cursor: string | undefined;
  do {
    const page = await deps.store.listMessages(key, { limit: READ_MESSAGES, ...(cursor ? { cursor } : {}) });
    for (const m of page.items) {
      if (isExpired(m, now)) continue;
      for (const ref of storedNative(m)?.blobs ?? []) named.add(ref.sha256);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return named;
}

/**
 * Deletes the blobs of the process that no kept message names. The blobs are listed before the
 * messages are read, so a blob put for an append after the listing is never a candidate; one put
 * for an append still in flight when the messages are read could be (its message not yet
 * written), so the names are read once more after the deletes and any blob named by then is put
 * back from the bytes read before its delete. Run it on a process at rest, like an export.
 *
 * @example await sweepBlobs(deps, { tenantId: "team-a", processId: "chat-1" }) // { listed: 12, kept: 9, deleted: [...3 shas], restored: [] }
 */
export async function sweepBlobs(deps: CoreDeps, key: ProcessKey, options: { dryRun?: boolean } = {}): Promise<BlobSweep> {
  await requireProcess(deps, key);
  return deleteUnnamed(deps, key, await sweepingStore(deps).list(key), options);
}

/**
 * The blobs of originals DynamoDB's TTL has just removed (docs/configuration.md, "Retention"):
 * of the shas those originals named, deletes each that no message still kept names, with the
 * sweep's recheck. A process deleted meanwhile is skipped (its blobs went with it).
 *
 * @example await expireBlobs(deps, key, ["9f86d0…"]) // { listed: 1, kept: 0, deleted: ["9f86d0…"], restored: [] }
 */
export async function expireBlobs(deps: CoreDeps, key: ProcessKey, shas: readonly string[]): Promise<BlobSweep> {
  try {
    await requireProcess(deps, key);
  } catch (err) {
    if (err instanceof AppError && err.kind === "not_found") return { listed: 0, kept: 0, deleted: [], restored: [] };
    throw err;
  }
  return deleteUnnamed(deps, key, [...new Set(shas)], {});
}

function sweepingStore(deps: CoreDeps) {
  const blobs = deps.blobs;
  if (!blobs) throw new AppError("internal", "blobs.unconfigured", "the sweep needs a blob store and none is configured");
  if (!blobs.delete) throw new AppError("internal", "blobs.no_delete", "this blob store cannot delete one blob: the sweep needs it");
  return blobs;
}

/** Of `candidates`, deletes those no kept message names; puts back any named once the deletes are done. */
async function deleteUnnamed(deps: CoreDeps, key: ProcessKey, candidates: readonly string[], options: { dryRun?: boolean }): Promise<BlobSweep> {
  const blobs = sweepingStore(deps);
  const named = await namedBlobs(deps, key, deps.clock.now());
  const unnamed = candidates.filter((sha) => !named.has(sha));
  if (options.dryRun) return { listed: candidates.length, kept: candidates.length - unnamed.length, deleted: unnamed, restored: [] };

  const held = new Map<string, Uint8Array>();
  const deleted: string[] = [];
  for (const sha of unnamed) {
    const bytes = await blobs.get(key, sha);
    if (!bytes) continue;
    held.set(sha, bytes);
    if (await blobs.delete!(key, sha)) deleted.push(sha);
  }
  const after = await namedBlobs(deps, key, deps.clock.now());
  const restored = deleted.filter((sha) => after.has(sha));
  for (const sha of restored) await blobs.put(key, sha, held.get(sha)!);
  if (deleted.length > 0) deps.log.info("blobs swept", { ...key, deleted: deleted.length - restored.length, restored: restored.length });
  return { listed: candidates.length, kept: candidates.length - unnamed.length, deleted: deleted.filter((sha) => !after.has(sha)), restored };
}
