/**
 * Picks the blob store from the environment (docs/configuration.md, "Blob storage"): BLOB_BUCKET ->
 * S3 (S3_ENDPOINT for an S3-compatible server), else BLOB_DIR -> a folder, else the local runner's
 * folder. A Lambda without BLOB_BUCKET fails at its start, naming the variable. Only the entries
 * of the functions that use blobs (stacks/handlers.ts, `blobs`) call it, so that no other bundle
 * carries the S3 client.
 */
import { createS3BlobStore, createS3Client } from "../adapters/blobs/s3-blob-store.js";
import type { BlobStore } from "../ports/blob-store.js";
import type { Tracing } from "../ports/tracing.js";
import type { ServiceDeps } from "../services/deps.js";
import { createCachedBlobReader } from "../services/blob-reader.js";
import { readBlobEnv, type Env } from "./env.js";

export interface BlobStoreOptions {
  /** The local runner's folder for blobs when neither BLOB_BUCKET nor BLOB_DIR is set. */
  localDir?: string;
  /** Wraps the S3 client (tracing). */
  capture?: <C extends object>(client: C) => C;
  /**
   * Builds the folder store: given by the local runner and the scripts
   * (core/composition/local-blob-store.ts), never by a Lambda entry, whose bundle then carries no
   * folder adapter.
   */
  directory?: (root: string) => BlobStore;
}

/**
 * The blob store this container uses, or undefined where none is configured outside Lambda (tests,
 * scripts): the services then skip blobs.
 *
 * @example
 * const blobs = createBlobStore(process.env); // in Lambda: S3, BLOB_BUCKET
 * const local = createBlobStore({}, { localDir: ".memory-data" }); // the local runner
 */
export function createBlobStore(env: Env, options: BlobStoreOptions = {}): BlobStore | undefined {
  const config = readBlobEnv(env);
  if (config.bucket) {
    return createS3BlobStore({
      client: createS3Client({ endpoint: config.s3Endpoint, capture: options.capture }),
      bucket: config.bucket,
    });
  }
  const folder = config.dir ?? options.localDir;
  if (folder !== undefined) {
    if (!options.directory) throw new Error("BLOB_DIR works outside Lambda only: use BLOB_BUCKET");
    return options.directory(folder);
  }
  // A deployed function must not run without the stage's bucket.
  if (config.inLambda) {
    throw new Error("BLOB_BUCKET is not set: the stage's blob bucket (output BlobBucketName)");
  }
  return undefined;
}

/**
 * The dependencies with the blob store of this environment and its cached reader, when there is
 * one (`deps.blobs`, `deps.blobReader`); unchanged otherwise.
 *
 * @example
 * const deps = withBlobStore(createBaseDeps(), process.env); // functions/plain-routes.ts
 */
export function withBlobStore<D extends ServiceDeps>(
  deps: D,
  env: Env = process.env,
  options: { localDir?: string; tracing?: Tracing; directory?: (root: string) => BlobStore } = {},
): D {
  const blobs = createBlobStore(env, { localDir: options.localDir, capture: options.tracing?.capture, directory: options.directory });
  if (blobs) Object.assign(deps, { blobs, blobReader: createCachedBlobReader(blobs) });
  return deps;
}
