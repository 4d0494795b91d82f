/**
 * The blob store outside Lambda (the local runner, the scripts, tests): as core/composition/blob-store.ts
 * picks it, with the folder adapter for BLOB_DIR and the runner's own folder. Kept apart so that no
 * Lambda bundle carries the folder adapter.
 */
import { createDirectoryBlobStore } from "../adapters/blobs/directory-blob-store.js";
import type { BlobStore } from "../ports/blob-store.js";
import type { ServiceDeps } from "../services/deps.js";
import { createBlobStore as pickBlobStore, withBlobStore as addBlobStore, type BlobStoreOptions } from "./blob-store.js";
import type { Env } from "./env.js";

const directory = (root: string) => createDirectoryBlobStore({ root });

/** createBlobStore (core/composition/blob-store.ts) with the folder adapter. */
export const createBlobStore = (env: Env, options: BlobStoreOptions = {}): BlobStore | undefined => pickBlobStore(env, { directory, ...options });

/** withBlobStore (core/composition/blob-store.ts) with the folder adapter. */
export const withBlobStore = <D extends ServiceDeps>(deps: D, env: Env = process.env, options: Parameters<typeof addBlobStore>[2] = {}): D =>
  addBlobStore(deps, env, { directory, ...options });
