/**
 * The per-container cache of blob reads (docs/configuration.md, "Blob storage"). A blob is named
 * by its content and never changes, so a get can be remembered for as long as the container lives;
 * the cache is bounded by bytes, least recently used out first.
 */
import { Lru } from "./lru.js";
import type { BlobScope, BlobStore } from "../ports/blob-store.js";
import type { BlobReader, BlobReaderStats } from "./deps.js";

/** 64 MiB: the default bound of the bytes a container keeps. */
export const DEFAULT_BLOB_CACHE_BYTES = 64 * 1024 * 1024;

export interface CachedBlobReaderOptions {
  /** The bytes the cache keeps at most; a blob larger than this is read every time. */
  maxBytes?: number;
}

/**
 * Reads through the store once per blob: a miss is fetched once even when several gets ask for it
 * at the same time (they share the read in flight); a blob that does not exist is not remembered
 * (it may be put later). The bytes handed out are shared between callers: read them, never write.
 *
 * @example
 * const reader = createCachedBlobReader(blobs, { maxBytes: 16 * 1024 * 1024 });
 * const bytes = await reader.get({ tenantId, processId }, sha256);
 */
export function createCachedBlobReader(store: Pick<BlobStore, "get">, options: CachedBlobReaderOptions = {}): BlobReader {
  const maxBytes = options.maxBytes ?? DEFAULT_BLOB_CACHE_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new Error(`blob cache: maxBytes must be a whole number from 1, got ${maxBytes}`);
  const stats: BlobReaderStats = { hits: 0, misses: 0, evictions: 0, bytes: 0 };
  const cache = new Lru<string, Uint8Array>({
    maxWeight: maxBytes,
    weigh: (bytes) => bytes.byteLength,
    onEvict: () => stats.evictions++,
  });
  const inFlight = new Map<string, Promise<Uint8Array | null>>();
  const keyOf = (scope: BlobScope, sha256: string) => `${scope.tenantId}/${scope.processId}/${sha256}`;

  return {
    async get(scope, sha256) {
      const key = keyOf(scope, sha256);
      const cached = cache.get(key);
      if (cached) {
        stats.hits++;
        return cached;
      }
      const pending = inFlight.get(key);
      if (pending) {
        stats.hits++;
        return pending;
      }
      stats.misses++;
      const read = store
        .get(scope, sha256)
        .then((bytes) => {
          if (bytes) cache.set(key, bytes);
          return bytes;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, read);
      return read;
    },
    stats: () => ({ ...stats, bytes: cache.weight }),
  };
}
