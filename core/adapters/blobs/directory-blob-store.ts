/**
 * The blob store in a local folder (BLOB_DIR; the local runner's default): one file per blob at
 * `<root>/blobs/<tenantId>/<processId>/<sha256>`, the S3 layout. A put writes a temporary file in the
 * same folder and renames it into place, so a reader never sees a partly written blob.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { BlobScope, BlobStore } from "../../ports/blob-store.js";
import { blobKey, isSha256, processPrefix, tenantPrefix } from "./keys.js";

export interface DirectoryBlobStoreOptions {
  /** The folder the `blobs/` tree is created in. */
  root: string;
}

const isNotFound = (e: unknown) => (e as NodeJS.ErrnoException)?.code === "ENOENT";

/** The entries of a folder, or none when it does not exist. */
async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}

/**
 * @example
 * const blobs = createDirectoryBlobStore({ root: ".memory-data" });
 */
export function createDirectoryBlobStore(options: DirectoryBlobStoreOptions): BlobStore {
  const root = path.resolve(options.root);
  const fileOf = (key: string) => path.join(root, ...key.split("/"));

  /** Deletes the blob files of one process folder, then the folder; returns how many blobs. */
  async function clearProcessDir(dir: string): Promise<number> {
    let deleted = 0;
    for (const name of await entries(dir)) {
      try {
        await unlink(path.join(dir, name));
        if (isSha256(name)) deleted++;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    await rm(dir, { recursive: true, force: true });
    return deleted;
  }

  return {
    async put(scope, sha256, bytes) {
      const file = fileOf(blobKey(scope, sha256));
      await mkdir(path.dirname(file), { recursive: true });
      const temp = `${file}.${randomUUID()}.tmp`;
      try {
        await writeFile(temp, bytes);
        // Atomic within one file system; a concurrent put of the same sha writes the same bytes.
        await rename(temp, file);
      } catch (e) {
        await rm(temp, { force: true });
        throw e;
      }
    },

    async putIfMissing(scope, sha256, bytes) {
      if (await this.has(scope, sha256)) return false;
      await this.put(scope, sha256, bytes);
      return true;
    },

    async has(scope, sha256) {
      try {
        await stat(fileOf(blobKey(scope, sha256)));
        return true;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw e;
      }
    },

    async get(scope, sha256) {
      try {
        return new Uint8Array(await readFile(fileOf(blobKey(scope, sha256))));
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    },

    deleteProcess: (scope: BlobScope) => clearProcessDir(fileOf(processPrefix(scope))),

    async deleteTenant(tenantId) {
      const dir = fileOf(tenantPrefix(tenantId));
      let deleted = 0;
      for (const processId of await entries(dir)) deleted += await clearProcessDir(path.join(dir, processId));
      await rm(dir, { recursive: true, force: true });
      return deleted;
    },

    async delete(scope, sha256) {
      try {
        await unlink(fileOf(blobKey(scope, sha256)));
        return true;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw e;
      }
    },

    async list(scope) {
      return (await entries(fileOf(processPrefix(scope)))).filter(isSha256).sort();
    },
  };
}
