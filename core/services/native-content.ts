/**
 * Native content between the services and the stores (docs/api.md, "Native content"): its large
 * parts put as blobs before the message is written, and put back for every answer that carries a
 * message whole.
 */
import { AppError } from "../domain/errors.js";
import { storedNative, type Memory, type Message } from "../domain/model.js";
import { NATIVE_INLINE_MAX_BYTES, NATIVE_MAX_BLOBS, joinNative, splitNative, type StoredNative } from "../domain/native/blob-parts.js";
import type { NativeContent } from "../domain/native/formats.js";
import { joinBlock, keepsBlockBlob, splitBlock } from "../domain/native/memory-block.js";
import type { ProcessKey } from "../ports/store.js";
import { WRITE_CONCURRENCY } from "../ports/store.js";
import type { CoreDeps } from "./deps.js";

const unconfigured = () => new AppError("internal", "blobs.unconfigured", "no blob store is configured");

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<unknown>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

/**
 * Puts the large parts of `native` in the blob store and answers what the message item keeps,
 * at most `roomBytes` of it inline (past that, the whole content is one blob). With `ifMissing`,
 * once the message is written: puts back only a blob that is gone, which the blob expiry or a
 * sweep deleted between the put and the write (they delete a blob no written message names, then
 * read the names again, so a blob is either named by then or put back here; docs/configuration.md,
 * "Retention").
 * A crash after the puts leaves blobs no message names: harmless, erased with the process.
 */
export async function keepNative(deps: CoreDeps, key: ProcessKey, native: NativeContent, roomBytes = Infinity, ifMissing = false): Promise<StoredNative> {
  // What the item holds inline is also bounded by the room the message's projection leaves.
  const { stored, parts } = splitNative(native, { inlineMax: Math.max(0, Math.min(NATIVE_INLINE_MAX_BYTES, roomBytes)) });
  if (parts.length === 0) return stored;
  if (parts.length > NATIVE_MAX_BLOBS) {
    throw new AppError("too_large", "message.too_many_parts", `native content has ${parts.length} large parts; at most ${NATIVE_MAX_BLOBS}`, {
      fields: ["native"],
      limit: NATIVE_MAX_BLOBS,
    });
  }
  const blobs = deps.blobs;
  if (!blobs) throw unconfigured();
  await inBatches(parts, WRITE_CONCURRENCY, (p) => blobs[ifMissing ? "putIfMissing" : "put"](key, p.sha256, p.bytes));
  return stored;
}

/**
 * The messages with `native` put back together (blobs fetched, each sha once); a message without
 * native content, or that carries it already (the one an append just wrote), is returned as it is.
 */
export async function withNative(deps: CoreDeps, key: ProcessKey, messages: readonly Message[]): Promise<Message[]> {
  const wanted = new Set<string>();
  const joining = (m: Message) => (m.native === undefined ? storedNative(m) : undefined);
  for (const m of messages) for (const ref of joining(m)?.blobs ?? []) wanted.add(ref.sha256);
  const fetched = new Map<string, Uint8Array>();
  if (wanted.size > 0) {
    // Blobs are immutable: the container's cache reads each one at most once.
    const blobs = deps.blobReader ?? deps.blobs;
    if (!blobs) throw unconfigured();
    // A blob not found is left out: joinNative refuses the message that names it.
    await inBatches([...wanted], WRITE_CONCURRENCY, async (sha) => {
      const bytes = await blobs.get(key, sha);
      if (bytes) fetched.set(sha, bytes);
    });
  }
  return messages.map((m) => {
    const stored = joining(m);
    return stored ? { ...m, native: joinNative(stored, fetched) } : m;
  });
}

/**
 * The memory as its item keeps it (docs/summarizers.md, "Where the block is kept"): a block past
 * the inline size put as a blob first and named by `nativeBlob`. A crash between the put and the
 * write leaves a blob no memory names, which the blob sweep deletes. With `ifMissing`, once the
 * memory is written: puts the blob back only if a sweep deleted it meanwhile, as `keepNative` does.
 */
export async function keepBlock(deps: CoreDeps, key: ProcessKey, memory: Memory, ifMissing = false): Promise<Memory> {
  if (!memory.native) return memory;
  const split = splitBlock(memory.native);
  if ("inline" in split) return memory;
  const blobs = deps.blobs;
  if (!blobs) throw unconfigured();
  if (ifMissing) await blobs.putIfMissing(key, split.part.sha256, split.part.bytes);
  else await blobs.put(key, split.part.sha256, split.part.bytes);
  const { native: _inBlob, ...rest } = memory;
  return { ...rest, nativeBlob: split.blob };
}

/** The memory with its block put back from its blob; one that keeps it inline, or none, as it is. */
export async function withBlock(deps: CoreDeps, key: ProcessKey, memory: Memory): Promise<Memory> {
  const blob = memory.nativeBlob;
  if (!blob) return memory;
  const blobs = deps.blobReader ?? deps.blobs;
  if (!blobs) throw unconfigured();
  const bytes = await blobs.get(key, blob.sha256);
  const { nativeBlob: _named, ...rest } = memory;
  // A discarded or failed fold's block is swept (no replay reads it): it is gone, not lost.
  if (!bytes && !keepsBlockBlob(memory)) return rest;
  if (!bytes) throw new AppError("internal", "blobs.missing", `blob ${blob.sha256} of memory '${memory.id}' is missing`);
  return { ...rest, native: joinBlock(blob, bytes) };
}
