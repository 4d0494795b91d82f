/**
 * One behaviour suite for every blob store adapter, each against its real engine: S3 through the
 * AWS SDK against s3rver (test/global-setup.ts), the folder on the local disk, and the in-memory
 * store the unit tests and the chaos harness use.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDirectoryBlobStore } from "../../core/adapters/blobs/directory-blob-store.js";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { createS3BlobStore, S3_DELETE_BATCH } from "../../core/adapters/blobs/s3-blob-store.js";
import type { BlobScope, BlobStore } from "../../core/ports/blob-store.js";
import { createBlobStore } from "../../core/composition/local-blob-store.js";
import { freshBucket, S3RVER_CREDENTIALS } from "../support/s3.js";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface Engine {
  /** A store over a fresh, empty place; `batchSize` where the adapter pages its deletes. */
  open(options?: { batchSize?: number }): Promise<BlobStore>;
}

const folders: string[] = [];
const ENGINES: Record<string, Engine> = {
  "S3 (s3rver)": {
    async open(options) {
      const { client, bucket } = await freshBucket();
      return createS3BlobStore({ client, bucket, ...(options?.batchSize ? { batchSize: options.batchSize } : {}) });
    },
  },
  folder: {
    async open() {
      const root = await mkdtemp(path.join(tmpdir(), "vtm-blobs-"));
      folders.push(root);
      return createDirectoryBlobStore({ root });
    },
  },
  memory: { open: async () => createMemoryBlobStore() },
};

afterAll(async () => {
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
});

let seq = 0;
const scopeOf = (tenantId = "tenant-a"): BlobScope => ({ tenantId, processId: `proc-${++seq}` });

/** Puts `n` random blobs under the scope; returns their shas. */
async function putMany(store: BlobStore, scope: BlobScope, n: number, size = 64): Promise<string[]> {
  const shas: string[] = [];
  for (let i = 0; i < n; i++) {
    const bytes = randomBytes(size);
    shas.push(sha(bytes));
    await store.put(scope, sha(bytes), bytes);
  }
  return shas.sort();
}

describe.each(Object.keys(ENGINES))("blob store: %s", (name) => {
  const engine = ENGINES[name]!;
  let store: BlobStore;

  beforeAll(async () => {
    store = await engine.open();
  });

  it.each([
    ["random binary", () => randomBytes(4096)],
    ["empty", () => new Uint8Array()],
    ["5 MiB", () => randomBytes(5 * 1024 * 1024)],
    ["every byte value", () => Uint8Array.from({ length: 256 }, (_, i) => i)],
  ])("gives back %s bytes byte-identical", async (_label, make) => {
    const bytes = new Uint8Array(make());
    const scope = scopeOf();
    await store.put(scope, sha(bytes), bytes);
    const back = await store.get(scope, sha(bytes));
    expect(back).toBeInstanceOf(Uint8Array);
    expect(back!.byteLength).toBe(bytes.byteLength);
    expect(Buffer.from(back!).equals(Buffer.from(bytes))).toBe(true);
  }, 60_000);

  it("putIfMissing stores a blob only where none is", async () => {
    const scope = scopeOf();
    const bytes = randomBytes(100);
    expect(await store.putIfMissing(scope, sha(bytes), bytes)).toBe(true);
    expect(await store.putIfMissing(scope, sha(bytes), bytes)).toBe(false);
    expect(await store.list(scope)).toEqual([sha(bytes)]);
    expect(Buffer.from((await store.get(scope, sha(bytes)))!).equals(bytes)).toBe(true);
  });

  it("keeps one object when the same sha is put twice", async () => {
    const scope = scopeOf();
    const bytes = randomBytes(100);
    await store.put(scope, sha(bytes), bytes);
    await store.put(scope, sha(bytes), bytes);
    expect(await store.list(scope)).toEqual([sha(bytes)]);
    expect(Buffer.from((await store.get(scope, sha(bytes)))!).equals(bytes)).toBe(true);
  });

  it("answers null for a sha it does not hold, and for a sha held by another process", async () => {
    const scope = scopeOf();
    const bytes = randomBytes(10);
    await store.put(scope, sha(bytes), bytes);
    expect(await store.get(scope, "0".repeat(64))).toBeNull();
    expect(await store.get(scopeOf(), sha(bytes))).toBeNull();
    expect(await store.get({ tenantId: "tenant-other", processId: scope.processId }, sha(bytes))).toBeNull();
    // `has` says the same without reading the bytes.
    expect(await store.has(scope, sha(bytes))).toBe(true);
    expect(await store.has(scope, "0".repeat(64))).toBe(false);
    expect(await store.has(scopeOf(), sha(bytes))).toBe(false);
  });

  it("lists the shas of one process only, sorted; an unknown process lists none", async () => {
    const scope = scopeOf();
    const shas = await putMany(store, scope, 5);
    await putMany(store, scopeOf(), 2);
    expect(await store.list(scope)).toEqual(shas);
    expect(await store.list(scopeOf())).toEqual([]);
  });

  it("deleteProcess deletes that process's blobs and no other's, and is safe to repeat", async () => {
    const gone = scopeOf();
    const sibling = { tenantId: gone.tenantId, processId: `${gone.processId}0` }; // shares a key prefix
    const other = { tenantId: "tenant-b", processId: gone.processId };
    await putMany(store, gone, 4);
    const siblingShas = await putMany(store, sibling, 2);
    const otherShas = await putMany(store, other, 3);

    expect(await store.deleteProcess(gone)).toBe(4);
    expect(await store.list(gone)).toEqual([]);
    expect(await store.list(sibling)).toEqual(siblingShas);
    expect(await store.list(other)).toEqual(otherShas);
    expect(await store.deleteProcess(gone)).toBe(0);
    expect(await store.deleteProcess(scopeOf())).toBe(0);
  });

  it("delete removes one blob of the process and says whether it was there", async () => {
    const scope = scopeOf();
    const [first, second] = await putMany(store, scope, 2);
    expect(await store.delete!(scope, first!)).toBe(true);
    expect(await store.get(scope, first!)).toBeNull();
    expect(await store.has(scope, first!)).toBe(false);
    expect(await store.list(scope)).toEqual([second]);
    expect(await store.delete!(scope, first!)).toBe(false);
  });

  it("deleteTenant deletes every process of that tenant and nothing of another, and is safe to repeat", async () => {
    const tenant = `tenant-gone-${++seq}`;
    const a = scopeOf(tenant);
    const b = scopeOf(tenant);
    await putMany(store, a, 3);
    await putMany(store, b, 2);
    const neighbour = { tenantId: `${tenant}x`, processId: a.processId }; // shares a key prefix
    const neighbourShas = await putMany(store, neighbour, 2);

    expect(await store.deleteTenant(tenant)).toBe(5);
    expect(await store.list(a)).toEqual([]);
    expect(await store.list(b)).toEqual([]);
    expect(await store.list(neighbour)).toEqual(neighbourShas);
    expect(await store.deleteTenant(tenant)).toBe(0);
  });

  it("deletes more blobs than one delete batch holds", async () => {
    const paged = await engine.open({ batchSize: 10 });
    const tenant = `tenant-many-${++seq}`;
    const one = scopeOf(tenant);
    const two = scopeOf(tenant);
    await putMany(paged, one, 25, 8);
    await putMany(paged, two, 25, 8);
    expect((await paged.list(one)).length).toBe(25);
    expect(await paged.deleteProcess(one)).toBe(25);
    expect(await paged.list(one)).toEqual([]);
    expect(await paged.deleteTenant(tenant)).toBe(25);
    expect(await paged.list(two)).toEqual([]);
  }, 60_000);

  it("refuses a sha that is not lowercase hex SHA-256 and an id outside the safe alphabet", async () => {
    const scope = scopeOf();
    await expect(store.put(scope, "../../etc/passwd", new Uint8Array([1]))).rejects.toThrow(/SHA-256/);
    await expect(store.get(scope, "A".repeat(64))).rejects.toThrow(/SHA-256/);
    await expect(store.list({ tenantId: "t/../x", processId: "p" })).rejects.toThrow(/not a valid id/);
  });
});

describe("S3 blob store specifics", () => {
  it("keeps each blob under blobs/<tenantId>/<processId>/<sha256> and deletes in batches of 1000 by default", async () => {
    const { client, bucket } = await freshBucket();
    const store = createS3BlobStore({ client, bucket });
    const scope = { tenantId: "tenant-k", processId: "proc-k" };
    const bytes = randomBytes(32);
    await store.put(scope, sha(bytes), bytes);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([`blobs/tenant-k/proc-k/${sha(bytes)}`]);
    expect(S3_DELETE_BATCH).toBe(1000);
    expect(() => createS3BlobStore({ client, bucket, batchSize: 1001 })).toThrow(/batchSize/);
  });

  it("is what BLOB_BUCKET with S3_ENDPOINT builds, ahead of BLOB_DIR, addressed by path", async () => {
    const { client, bucket, endpoint } = await freshBucket();
    const dir = await mkdtemp(path.join(tmpdir(), "vtm-blobs-"));
    folders.push(dir);
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    // The SDK's own credential chain, as a developer's shell would give it.
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    try {
      const store = createBlobStore({ BLOB_BUCKET: bucket, S3_ENDPOINT: endpoint, BLOB_DIR: dir })!;
      const bytes = randomBytes(16);
      await store.put({ tenantId: "tenant-e", processId: "proc-e" }, sha(bytes), bytes);
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      expect(listed.Contents?.map((o) => o.Key)).toEqual([`blobs/tenant-e/proc-e/${sha(bytes)}`]);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      for (const [name, value] of [["AWS_ACCESS_KEY_ID", saved.id], ["AWS_SECRET_ACCESS_KEY", saved.secret]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe("folder blob store specifics", () => {
  it("leaves no temporary file behind and removes the folders of what it deleted", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "vtm-blobs-"));
    try {
      const store = createDirectoryBlobStore({ root });
      const scope = { tenantId: "tenant-f", processId: "proc-f" };
      const shas = await putMany(store, scope, 3);
      expect((await readdir(path.join(root, "blobs", "tenant-f", "proc-f"))).sort()).toEqual(shas);
      await store.deleteTenant("tenant-f");
      expect(await readdir(path.join(root, "blobs"))).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
