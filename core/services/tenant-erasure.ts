/**
 * Erasing a leaving tenant's data (docs/api.md, "Deleting a process"; the operator's
 * `npm run keys -- erase-tenant`): every process of the tenant deleted the way
 * `DELETE /v1/processes/{id}` deletes one (its blobs included), then its settings, model usage and
 * inbox, and last every blob left under the tenant. Revoking the tenant's keys first is the
 * caller's part, so that nothing new is written meanwhile.
 */
import type { BlobStore } from "../ports/blob-store.js";
import type { ErasureStore, ProcessStore } from "../ports/store.js";
import { DEFAULT_ERASURE, eraseRemaining } from "./process-deletion.js";

/** Processes read per listing page. */
const PAGE = 100;

/**
 * @param blobs where the deployment keeps blobs (docs/configuration.md, "Blob storage"); without
 * one, there are none to delete.
 */
export async function eraseTenant(
  store: ErasureStore & ProcessStore,
  tenantId: string,
  at: string,
  blobs?: BlobStore,
): Promise<{ processes: number; items: number; blobs: number }> {
  const erased = new Set<string>();
  let items = 0;
  let blobCount = 0;
  for (;;) {
    // A process leaves the listing once its tombstone is on, so the first page is read again.
    const page = await store.listProcesses(tenantId, { limit: PAGE });
    const left = page.items.filter((p) => !erased.has(p.processId));
    if (left.length === 0) break;
    for (const { processId } of left) {
      const key = { tenantId, processId };
      const marked = await store.markDeleted(key, at);
      if (marked.ok && marked.status === "deleting") {
        items += await eraseRemaining(store, key, DEFAULT_ERASURE.batchItems);
        if (blobs) blobCount += await blobs.deleteProcess(key);
        await store.finishDeletion(key);
      }
      erased.add(processId);
    }
  }
  items += await store.eraseTenantRecords(tenantId);
  // What no process deletion reached: processes deleted before, or a put that raced a deletion.
  if (blobs) blobCount += await blobs.deleteTenant(tenantId);
  return { processes: erased.size, items, blobs: blobCount };
}
