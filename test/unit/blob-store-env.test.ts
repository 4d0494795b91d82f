/**
 * Which blob store the composition root builds from the environment (core/composition/blob-store.ts):
 * the bucket wins, then the folder, then the local runner's folder; a Lambda without BLOB_BUCKET
 * fails at its start naming the variable; elsewhere (tests, scripts) there is none.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBlobStore, withBlobStore } from "../../core/composition/local-blob-store.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { readBlobEnv } from "../../core/composition/env.js";
import { silentLog } from "../../core/adapters/log.js";

const scope = { tenantId: "t1", processId: "p1" };
const sha = "a".repeat(64);

async function inTempDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), "vtm-blob-env-"));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("blob store from the environment", () => {
  it("reads BLOB_BUCKET, S3_ENDPOINT and BLOB_DIR, and names a malformed one", () => {
    expect(readBlobEnv({ BLOB_BUCKET: " vtm-blobs ", S3_ENDPOINT: "http://127.0.0.1:9000", BLOB_DIR: "/data" })).toEqual({
      bucket: "vtm-blobs",
      s3Endpoint: "http://127.0.0.1:9000",
      dir: "/data",
      inLambda: false,
    });
    expect(readBlobEnv({ AWS_LAMBDA_FUNCTION_NAME: "vtm-plain-routes" }).inLambda).toBe(true);
    expect(() => readBlobEnv({ BLOB_BUCKET: "No_Such" })).toThrow(/BLOB_BUCKET/);
    expect(() => readBlobEnv({ BLOB_BUCKET: "ab" })).toThrow(/BLOB_BUCKET/);
    expect(() => readBlobEnv({ S3_ENDPOINT: "localhost:9000" })).toThrow(/S3_ENDPOINT/);
  });

  it("uses BLOB_DIR when no bucket is set, and the local runner's folder when neither is", async () => {
    await inTempDir(async (dir) => {
      await createBlobStore({ BLOB_DIR: path.join(dir, "given") }, { localDir: path.join(dir, "local") })!.put(scope, sha, new Uint8Array([1]));
      await createBlobStore({}, { localDir: path.join(dir, "local") })!.put(scope, sha, new Uint8Array([2]));
      expect((await readdir(dir)).sort()).toEqual(["given", "local"]);
      expect(await readdir(path.join(dir, "given", "blobs", "t1", "p1"))).toEqual([sha]);
    });
  });

  it("fails a Lambda's start without BLOB_BUCKET, naming it; builds none outside Lambda", () => {
    expect(() => createBlobStore({ AWS_LAMBDA_FUNCTION_NAME: "vtm-plain-routes" })).toThrow(/BLOB_BUCKET is not set/);
    const lambda = { AWS_LAMBDA_FUNCTION_NAME: "f", TABLE_NAME: "t" };
    expect(() => withBlobStore(createDeps({ env: lambda, log: silentLog }), lambda)).toThrow(/BLOB_BUCKET/);
    expect(createBlobStore({})).toBeUndefined();
    // A function that never touches blobs does not ask for a store, and starts without the bucket.
    expect(createDeps({ env: lambda, log: silentLog }).blobs).toBeUndefined();
  });

  it("gives the services the store and its cached reader together, or neither", async () => {
    const given = createDeps({ env: {}, log: silentLog, blobs: createBlobStore({ BLOB_DIR: "/unused" }) });
    expect([given.blobs, given.blobReader].every(Boolean)).toBe(true);
    await inTempDir(async (dir) => {
      const deps = withBlobStore(createDeps({ env: {}, log: silentLog }), { BLOB_DIR: dir });
      await deps.blobs!.put(scope, sha, new Uint8Array([7, 8]));
      expect(Array.from((await deps.blobReader!.get(scope, sha))!)).toEqual([7, 8]);
      const none = withBlobStore(createDeps({ env: {}, log: silentLog }), {});
      expect([none.blobs, none.blobReader]).toEqual([undefined, undefined]);
    });
  });
});
