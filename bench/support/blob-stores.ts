/**
 * For the native-content benchmark: a wrapper that counts what the service asks of any blob store
 * (the folder one is core/adapters/blobs/directory-blob-store.ts).
 */
import type { BlobStore } from "../../core/ports/blob-store.js";

export interface BlobCounts {
  puts: number;
  putBytes: number;
  gets: number;
  getBytes: number;
  getMs: number;
}

/** `inner`, with every put and get counted (bytes and time of the gets too). */
export function countedBlobStore(inner: BlobStore): { store: BlobStore; counts: BlobCounts } {
  const counts: BlobCounts = { puts: 0, putBytes: 0, gets: 0, getBytes: 0, getMs: 0 };
  const store: BlobStore = {
    ...inner,
    async put(scope, sha256, bytes) {
      counts.puts++;
      counts.putBytes += bytes.byteLength;
      return inner.put(scope, sha256, bytes);
    },
    async get(scope, sha256) {
      const start = performance.now();
      const bytes = await inner.get(scope, sha256);
      counts.getMs += performance.now() - start;
      counts.gets++;
      counts.getBytes += bytes?.byteLength ?? 0;
      return bytes;
    },
  };
  return { store, counts };
}
