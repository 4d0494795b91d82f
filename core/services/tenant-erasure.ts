/**
 * Erasing a leaving tenant's data (docs/api.md, "Deleting a process"; the operator's
 * `npm run keys -- erase-tenant`): every process of the tenant deleted the way
 * `DELETE /v1/processes/{id}` deletes one, then its settings, model usage and inbox. Revoking the
 * tenant's keys first is the caller's part, so that nothing new is written meanwhile.
 */
import type { ErasureStore, ProcessStore } from "../ports/store.js";

/** Processes read per listing page, and items erased between two checks of where a process stands. */
const PAGE = 100;
const BATCH = 5_000;

export async function eraseTenant(
  store: ErasureStore & ProcessStore,
  tenantId: string,
  at: string,
): Promise<{ processes: number; items: number }> {
  const erased = new Set<string>();
  let items = 0;
  for (;;) {
    // A process leaves the listing once its tombstone is on, so the first page is read again.
    const page = await store.listProcesses(tenantId, { limit: PAGE });
    const left = page.items.filter((p) => !erased.has(p.processId));
    if (left.length === 0) break;
    for (const { processId } of left) {
      const key = { tenantId, processId };
      const marked = await store.markDeleted(key, at);
      if (marked.ok && marked.status === "deleting") {
        for (;;) {
          const step = await store.eraseItems(key, BATCH);
          items += step.erased;
          if (step.done) break;
        }
        await store.finishDeletion(key);
      }
      erased.add(processId);
    }
  }
  items += await store.eraseTenantRecords(tenantId);
  return { processes: erased.size, items };
}
