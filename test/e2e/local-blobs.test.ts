/**
 * The local runner's blob store (docs/configuration.md, "Blob storage"): a folder by default, with
 * no extra service, removed on stop when the table is in memory; BLOB_DIR names another. A
 * `DELETE /v1/processes/{id}` over HTTP deletes the process's blobs and no other process's.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import { KEY_A, startTestService } from "../support/service.js";

const blob = (text: string) => {
  const bytes = new TextEncoder().encode(text);
  return { bytes, sha: createHash("sha256").update(bytes).digest("hex") };
};

describe("the local runner's blobs", () => {
  it("are kept in a temporary folder by default, deleted with their process, and the folder removed on stop", async () => {
    const { service } = await startTestService();
    try {
      expect(service.blobStorage.temporary).toBe(true);
      const client = createMemoryClient({ baseUrl: service.url, apiKey: KEY_A });
      for (const id of ["blob-gone", "blob-kept"]) {
        await client.upsertProcess(id, { projectId: "blobs" });
        await client.appendMessage(id, { role: "USER", content: "hello" });
      }
      const gone = { tenantId: "tenant-a", processId: "blob-gone" };
      const kept = { tenantId: "tenant-a", processId: "blob-kept" };
      const a = blob("a long tool result");
      await service.deps.blobs!.put(gone, a.sha, a.bytes);
      await service.deps.blobs!.put(kept, a.sha, a.bytes);
      expect(await readdir(path.join(service.blobStorage.location, "tenant-a"))).toEqual(expect.arrayContaining(["blob-gone", "blob-kept"]));

      const res = await fetch(`${service.url}/v1/processes/blob-gone`, { method: "DELETE", headers: { authorization: `Bearer ${KEY_A}` } });
      expect(res.status).toBe(204);
      expect(await service.deps.blobs!.list(gone)).toEqual([]);
      expect(await service.deps.blobs!.list(kept)).toEqual([a.sha]);
      expect(Array.from((await service.deps.blobReader!.get(kept, a.sha))!)).toEqual(Array.from(a.bytes));
    } finally {
      await service.stop();
    }
    expect(existsSync(service.blobStorage.location)).toBe(false);
  }, 60_000);

  it("go to BLOB_DIR when it is set, and stay there after stop", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "vtm-blob-dir-"));
    try {
      const { service } = await startTestService({ env: { BLOB_DIR: dir } });
      const b = blob("kept across restarts");
      try {
        expect(service.blobStorage).toEqual({ location: path.resolve(dir), temporary: false });
        await service.deps.blobs!.put({ tenantId: "tenant-a", processId: "p1" }, b.sha, b.bytes);
      } finally {
        await service.stop();
      }
      expect(await readdir(path.join(dir, "blobs", "tenant-a", "p1"))).toEqual([b.sha]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
