/**
 * Blob stores for the native-content benchmark: a folder on the local disk (each blob one file,
 * `blobs/<tenantId>/<processId>/<sha256>` under the root, the layout of
 * core/adapters/blobs/keys.ts), and a wrapper that counts what the service asks of any store.
 */
import { mkdir, readdir, readFile, rm, writeFile, rename } from "node:fs/promises";
import path from "node:path";
import { blobKey, processPrefix, tenantPrefix } from "../../core/adapters/blobs/keys.js";
import type { BlobScope, BlobStore } from "../../core/ports/blob-store.js";

/** A blob store in `root`: a put writes a temporary file and renames it, so a reader never sees half a blob. */
export function directoryBlobStore(root: string): BlobStore {
  const file = (key: string) => path.join(root, ...key.split("/"));
  const count = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).length;
  return {
    async put(scope, sha256, bytes) {
      const target = file(blobKey(scope, sha256));
      await mkdir(path.dirname(target), { recursive: true });
      const temp = `${target}.${process.pid}.tmp`;
      await writeFile(temp, bytes);
      await rename(temp, target);
    },
    async get(scope, sha256) {
      try {
        return new Uint8Array(await readFile(file(blobKey(scope, sha256))));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw e;
      }
    },
    async deleteProcess(scope: BlobScope) {
      const dir = file(processPrefix(scope));
      const n = await count(dir);
      await rm(dir, { recursive: true, force: true });
      return n;
    },
    async deleteTenant(tenantId: string) {
      const dir = file(tenantPrefix(tenantId));
      let n = 0;
      for (const p of await readdir(dir).catch(() => [] as string[])) n += await count(path.join(dir, p));
      await rm(dir, { recursive: true, force: true });
      return n;
    },
    async list(scope) {
      return (await readdir(file(processPrefix(scope))).catch(() => [] as string[])).filter((f) => !f.endsWith(".tmp")).sort();
    },
  };
}

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
