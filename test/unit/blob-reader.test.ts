/**
 * The cached blob reader (core/services/blob-reader.ts) over a hand-written store that records its
 * gets and holds them until the test releases them: one read per blob however many ask at once,
 * eviction by bytes, misses not remembered, a failed read not remembered either.
 */
import { describe, expect, it } from "vitest";
import type { BlobScope, BlobStore } from "../../core/ports/blob-store.js";
import { createCachedBlobReader, DEFAULT_BLOB_CACHE_BYTES } from "../../core/services/blob-reader.js";

const scope: BlobScope = { tenantId: "t1", processId: "p1" };
const sha = (n: number) => n.toString(16).padStart(64, "0");

/** A store of `sizes[sha]` bytes per sha; each get is recorded and waits for `release()`. */
function heldStore(sizes: Record<string, number>) {
  const gets: string[] = [];
  let waiting: Array<() => void> = [];
  let failNext = false;
  const store: Pick<BlobStore, "get"> = {
    async get(s, sha256) {
      gets.push(`${s.tenantId}/${s.processId}/${sha256}`);
      await new Promise<void>((resolve) => waiting.push(resolve));
      if (failNext) {
        failNext = false;
        throw new Error("store down");
      }
      const size = sizes[sha256];
      return size === undefined ? null : new Uint8Array(size).fill(size % 251);
    },
  };
  const release = () => {
    const now = waiting;
    waiting = [];
    for (const r of now) r();
  };
  return { store, gets, release, failOnce: () => (failNext = true) };
}

/** Reads `sha256` through `reader`, releasing the store's held gets until it answers. */
async function read(reader: ReturnType<typeof createCachedBlobReader>, held: ReturnType<typeof heldStore>, sha256: string, at = scope) {
  const pending = reader.get(at, sha256);
  await new Promise((r) => setImmediate(r));
  held.release();
  return pending;
}

describe("cached blob reader", () => {
  it("fetches a missing blob once even when ten gets ask for it at the same time", async () => {
    const held = heldStore({ [sha(1)]: 100 });
    const reader = createCachedBlobReader(held.store);
    const all = Promise.all(Array.from({ length: 10 }, () => reader.get(scope, sha(1))));
    await new Promise((r) => setImmediate(r));
    held.release();
    const results = await all;
    expect(held.gets).toEqual([`t1/p1/${sha(1)}`]);
    expect(results.every((r) => r?.byteLength === 100)).toBe(true);
    // And afterwards from the cache, without another read.
    expect((await reader.get(scope, sha(1)))?.byteLength).toBe(100);
    expect(held.gets).toHaveLength(1);
    expect(reader.stats()).toMatchObject({ misses: 1, hits: 10, bytes: 100 });
  });

  it("keeps blobs of different processes apart", async () => {
    const held = heldStore({ [sha(1)]: 10 });
    const reader = createCachedBlobReader(held.store);
    await read(reader, held, sha(1));
    await read(reader, held, sha(1), { tenantId: "t1", processId: "p2" });
    await read(reader, held, sha(1), { tenantId: "t2", processId: "p1" });
    expect(held.gets).toEqual([`t1/p1/${sha(1)}`, `t1/p2/${sha(1)}`, `t2/p1/${sha(1)}`]);
  });

  it("evicts the least recently used blobs once the bytes pass maxBytes", async () => {
    const held = heldStore({ [sha(1)]: 400, [sha(2)]: 400, [sha(3)]: 400 });
    const reader = createCachedBlobReader(held.store, { maxBytes: 1000 });
    await read(reader, held, sha(1));
    await read(reader, held, sha(2));
    await reader.get(scope, sha(1)); // now the most recently used
    await read(reader, held, sha(3)); // 1200 bytes: sha(2) goes
    expect(reader.stats()).toMatchObject({ evictions: 1, bytes: 800 });
    await reader.get(scope, sha(1));
    await reader.get(scope, sha(3));
    expect(held.gets).toHaveLength(3);
    await read(reader, held, sha(2));
    expect(held.gets.at(-1)).toBe(`t1/p1/${sha(2)}`);
    expect(held.gets).toHaveLength(4);
  });

  it("does not keep a blob larger than the whole cache, and reads it every time", async () => {
    const held = heldStore({ [sha(9)]: 2000 });
    const reader = createCachedBlobReader(held.store, { maxBytes: 1000 });
    expect((await read(reader, held, sha(9)))?.byteLength).toBe(2000);
    expect((await read(reader, held, sha(9)))?.byteLength).toBe(2000);
    expect(held.gets).toHaveLength(2);
    expect(reader.stats().bytes).toBe(0);
  });

  it("does not remember a miss (the blob may be put later) nor a failed read", async () => {
    const held = heldStore({ [sha(1)]: 5 });
    const reader = createCachedBlobReader(held.store);
    expect(await read(reader, held, sha(7))).toBeNull();
    expect(await read(reader, held, sha(7))).toBeNull();
    held.failOnce();
    await expect(read(reader, held, sha(1))).rejects.toThrow("store down");
    expect((await read(reader, held, sha(1)))?.byteLength).toBe(5);
    expect(held.gets).toHaveLength(4);
  });

  it("keeps an empty blob like any other", async () => {
    const held = heldStore({ [sha(4)]: 0 });
    const reader = createCachedBlobReader(held.store);
    expect((await read(reader, held, sha(4)))?.byteLength).toBe(0);
    expect((await reader.get(scope, sha(4)))?.byteLength).toBe(0);
    expect(held.gets).toHaveLength(1);
  });

  it("bounds the cache at 64 MiB by default and refuses a bound that is not a positive whole number", () => {
    expect(DEFAULT_BLOB_CACHE_BYTES).toBe(64 * 1024 * 1024);
    expect(() => createCachedBlobReader(heldStore({}).store, { maxBytes: 0 })).toThrow(/maxBytes/);
  });
});
