/**
 * The blob store in memory, for unit tests and the chaos harness: the same contract as S3 and the
 * folder (copies in, copies out, so a caller's later change to its array changes no blob).
 */
import type { BlobScope, BlobStore } from "../../ports/blob-store.js";
import { blobKey, processPrefix, tenantPrefix } from "./keys.js";

export interface MemoryBlobStore extends BlobStore {
  /** Every stored key (`blobs/<tenantId>/<processId>/<sha256>`), sorted. */
  keys(): string[];
}

export function createMemoryBlobStore(): MemoryBlobStore {
  const objects = new Map<string, Uint8Array>();
  const deleteUnder = (prefix: string) => {
    let deleted = 0;
    for (const key of [...objects.keys()]) {
      if (key.startsWith(prefix)) {
        objects.delete(key);
        deleted++;
      }
    }
    return deleted;
  };
  return {
    async put(scope, sha256, bytes) {
      objects.set(blobKey(scope, sha256), bytes.slice());
    },
    has: async (scope: BlobScope, sha256: string) => objects.has(blobKey(scope, sha256)),
    async putIfMissing(scope, sha256, bytes) {
      if (objects.has(blobKey(scope, sha256))) return false;
      objects.set(blobKey(scope, sha256), bytes.slice());
      return true;
    },
    async get(scope, sha256) {
      return objects.get(blobKey(scope, sha256))?.slice() ?? null;
    },
    deleteProcess: async (scope: BlobScope) => deleteUnder(processPrefix(scope)),
    deleteTenant: async (tenantId: string) => deleteUnder(tenantPrefix(tenantId)),
    delete: async (scope: BlobScope, sha256: string) => objects.delete(blobKey(scope, sha256)),
    async list(scope) {
      const prefix = processPrefix(scope);
      return [...objects.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)).sort();
    },
    keys: () => [...objects.keys()].sort(),
  };
}
