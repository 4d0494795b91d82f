/**
 * Erasing a leaving tenant's data (docs/api.md, "Deleting a process"; the operator's
 * `npm run keys -- erase-tenant`): the tenant marked as erased (no model usage is recorded for it
 * from then on, so a fold in flight cannot re-create it), every process of the tenant deleted the
 * way `DELETE /v1/processes/{id}` deletes one (its blobs included), the listed ones and the
 * unlisted ones alike (imports not yet live, deletions that stopped half way), then its settings,
 * model usage and inbox, and last every blob left under the tenant. It ends with a check that
 * nothing but tombstones is left. Revoking the tenant's keys first is the caller's part, so that
 * nothing new is written meanwhile.
 */
import type { BlobStore } from "../ports/blob-store.js";
import type { ErasureStore, ListOptions, ProcessStore } from "../ports/store.js";
import type { Page } from "../domain/model.js";
import { DEFAULT_ERASURE, eraseRemaining } from "./process-deletion.js";

/** Processes read per listing page. */
const PAGE = 100;

export interface TenantErasure {
  processes: number;
  items: number;
  blobs: number;
  /** What the final check found besides tombstones (empty: the erasure is complete). */
  left: string[];
}

/**
 * @param blobs where the deployment keeps blobs (docs/configuration.md, "Blob storage"); without
 * one, there are none to delete.
 */
export async function eraseTenant(store: ErasureStore & ProcessStore, tenantId: string, at: string, blobs?: BlobStore): Promise<TenantErasure> {
  await store.markTenantErased(tenantId, at);
  const erased = new Set<string>();
  let items = 0;
  let blobCount = 0;
  for (;;) {
    // A process leaves the listings once its deletion is done, so they are read again, each to its end.
    const listed = await allIds((o) => store.listProcesses(tenantId, o).then((p) => ({ ...p, items: p.items.map((x) => x.processId) })));
    const unlisted = await allIds((o) => store.listUnlistedProcesses(tenantId, o));
    const left = [...new Set([...listed, ...unlisted])].filter((id) => !erased.has(id));
    if (left.length === 0) break;
    for (const processId of left) {
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
  const left = await store.tenantLeftovers(tenantId, [...erased]);
  return { processes: erased.size, items, blobs: blobCount, left };
}

async function allIds(page: (o: ListOptions) => Promise<Page<string>>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const out = await page({ limit: PAGE, ...(cursor ? { cursor } : {}) });
    ids.push(...out.items);
    cursor = out.nextCursor;
  } while (cursor);
  return ids;
}
