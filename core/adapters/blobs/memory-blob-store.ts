/**
 * A blob store held in memory (core/ports/blob-store.ts): for tests, the chaos harness and the
 * local runner when no directory is given. Bytes are copied in and out, as a real store would.
 */
import type { BlobScope, BlobStore } from "../../ports/blob-store.js";

const prefix = (tenantId: string) => `blobs/${tenantId}/`;
const keyOf = (scope: BlobScope, sha256: string) => `${prefix(scope.tenantId)}${scope.processId}/${sha256}`;

/**
 * @example
 * const blobs = createMemoryBlobStore();
 * await blobs.put({ tenantId: "t1", processId: "p1" }, sha, bytes);
 */
export function createMemoryBlobStore(): BlobStore {
  const objects = new Map<string, Uint8Array>();
  const deleteUnder = (start: string) => {
    let n = 0;
    for (const k of [...objects.keys()]) if (k.startsWith(start) && objects.delete(k)) n++;
    return n;
  };
  return {
    async put(scope, sha256, bytes) {
      const k = keyOf(scope, sha256);
      if (!objects.has(k)) objects.set(k, bytes.slice());
    },
    async get(scope, sha256) {
      return objects.get(keyOf(scope, sha256))?.slice() ?? null;
    },
    async deleteProcess(scope) {
      return deleteUnder(`${prefix(scope.tenantId)}${scope.processId}/`);
    },
    async deleteTenant(tenantId) {
      return deleteUnder(prefix(tenantId));
    },
    async list(scope) {
      const start = `${prefix(scope.tenantId)}${scope.processId}/`;
      return [...objects.keys()].filter((k) => k.startsWith(start)).map((k) => k.slice(start.length));
    },
  };
}
