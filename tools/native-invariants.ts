/**
 * The stored-data invariants of native content: a message's reads back exactly
 * (`nativeViolations`), and so does a memory's provider block kept as a blob (`blockViolations`,
 * docs/summarizers.md, "Where the block is kept").
 */
import { storedNative, type Memory, type Message } from "../core/domain/model.js";
import { sha256Hex } from "../core/domain/native/blob-parts.js";
import { isExpired } from "../core/domain/retention.js";
import type { ProcessKey } from "../core/ports/store.js";
import type { CoreDeps } from "../core/services/deps.js";
import { withBlock, withNative } from "../core/services/native-content.js";

/**
 * The stored native content of each message reads back exactly: each blob it names is in the blob
 * store with bytes that hash to its name, and the content the service's reads put together
 * (`withNative`) has the JSON text whose SHA-256 the message item keeps. An original past its
 * retention is gone for every read (docs/configuration.md, "Retention"), its blobs may be too: it
 * is not checked.
 *
 * @example expect(await nativeViolations(deps, key, await readAllMessages(store, key))).toEqual([])
 */
export async function nativeViolations(deps: CoreDeps, key: ProcessKey, messages: readonly Message[]): Promise<string[]> {
  const v: string[] = [];
  const now = deps.clock.now();
  for (const m of messages) {
    const stored = storedNative(m);
    if (!stored || isExpired(m, now)) continue;
    let whole = true;
    for (const ref of stored.blobs ?? []) {
      const bytes = deps.blobs ? await deps.blobs.get(key, ref.sha256) : null;
      if (!bytes) v.push(`message ${m.id}: blob ${ref.sha256} of its native content is missing`);
      else if (sha256Hex(bytes) !== ref.sha256) v.push(`message ${m.id}: blob ${ref.sha256} holds other bytes (sha ${sha256Hex(bytes)})`);
      else continue;
      whole = false;
    }
    if (!whole) continue;
    try {
      const [read] = await withNative(deps, key, [m]);
      const hash = sha256Hex(JSON.stringify(read!.native!.content));
      if (hash !== stored.hash) v.push(`message ${m.id}: its native content reads back with hash ${hash}, the item keeps ${stored.hash}`);
    } catch (e) {
      v.push(`message ${m.id}: its native content does not read back: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return v.map((text) => `${key.tenantId}/${key.processId}: ${text}`);
}

/**
 * Every memory a replay, an undo or a commit may read (a summary, a reverted memory, a queued or
 * prepared fold) that names a block blob finds it in the blob store, with bytes that hash to its
 * name and read back as the block.
 *
 * @example expect(await blockViolations(deps, key, await store.listMemories(key))).toEqual([])
 */
export async function blockViolations(deps: CoreDeps, key: ProcessKey, memories: readonly Memory[]): Promise<string[]> {
  const v: string[] = [];
  for (const m of memories) {
    const blob = m.nativeBlob;
    if (!blob || m.status === "DISCARDED" || m.status === "FAILED") continue;
    const bytes = deps.blobs ? await deps.blobs.get(key, blob.sha256) : null;
    if (!bytes) v.push(`memory ${m.id}: blob ${blob.sha256} of its block is missing`);
    else if (sha256Hex(bytes) !== blob.sha256) v.push(`memory ${m.id}: blob ${blob.sha256} holds other bytes`);
    else if ((await withBlock(deps, key, m)).native?.format !== blob.format) v.push(`memory ${m.id}: its block reads back in another format`);
  }
  return v.map((text) => `${key.tenantId}/${key.processId}: ${text}`);
}
