/**
 * Deleting a process (docs/api.md, "Deleting a process"): the tombstone first, so that every
 * later write for the process fails (a turn, an append, a worker's commit, a redelivered event,
 * an inbox answer), then the erasure of every item. A small process is erased within the call;
 * a larger one by the compaction worker, on a `ProcessEraseRequested` event. The process's blobs
 * (docs/configuration.md, "Blob storage") go with its items, before the tombstone is finished, so
 * a deletion cut short between the two is finished by its repeat.
 */
import { notFound } from "../domain/errors.js";
import { domainEvent, type EventDetail } from "../domain/events.js";
import type { DeletionStatus, ErasureStore, ProcessKey } from "../ports/store.js";
import type { ErasureConfig, ServiceDeps } from "./deps.js";

export const DEFAULT_ERASURE: ErasureConfig = Object.freeze({ inlineItems: 500, batchItems: 5_000 });

const erasureOf = (deps: ServiceDeps): ErasureConfig => ({ ...DEFAULT_ERASURE, ...deps.erasure });

/** Deletes the process's blobs, if the deployment stores any; how many. */
const eraseBlobs = (deps: ServiceDeps, key: ProcessKey): Promise<number> => deps.blobs?.deleteProcess(key) ?? Promise.resolve(0);

/**
 * Deletes a process: `deleted` once every item is gone (the HTTP 204), `deleting` while the
 * worker erases the rest (202). Repeating it is safe and answers where the deletion stands; while
 * it is `deleting`, a repeat also asks the worker again, so a lost request is never lost work.
 * Another tenant's process, or none, is a 404.
 */
export async function deleteProcess(deps: ServiceDeps, key: ProcessKey): Promise<{ status: DeletionStatus }> {
  const marked = await deps.store.markDeleted(key, deps.clock.now().toISOString());
  if (!marked.ok) throw notFound("process", key.processId);
  if (marked.status === "deleted") return { status: "deleted" };
  const { erased, done } = await deps.store.eraseItems(key, erasureOf(deps).inlineItems);
  if (done) {
    const blobs = await eraseBlobs(deps, key);
    await deps.store.finishDeletion(key);
    deps.log.info("process deleted", { processId: key.processId, erased, blobs });
    return { status: "deleted" };
  }
  // Must go out: a failure is a 500 and the caller's repeat asks again.
  await deps.events.publish(domainEvent("ProcessEraseRequested", { tenantId: key.tenantId, processId: key.processId }));
  deps.log.info("process deletion continues in the background", { processId: key.processId, erased });
  return { status: "deleting" };
}

/**
 * The worker's part: erases what is left of a deleted process, batch after batch, then leaves the
 * bare tombstone. Safe to deliver twice or late (an erased process has nothing left to erase);
 * a delivery cut short is delivered again and goes on from what is left.
 */
export async function eraseProcess(deps: ServiceDeps, detail: EventDetail<"ProcessEraseRequested">): Promise<{ erased: number }> {
  const key = { tenantId: detail.tenantId, processId: detail.processId };
  const erased = await eraseRemaining(deps.store, key, erasureOf(deps).batchItems);
  const blobs = await eraseBlobs(deps, key);
  await deps.store.finishDeletion(key);
  deps.log.info("process deleted", { processId: key.processId, erased, blobs });
  return { erased };
}

/** Erases what is left of a deleted process, `batchItems` at a time, until nothing is; how many items. */
export async function eraseRemaining(store: Pick<ErasureStore, "eraseItems">, key: ProcessKey, batchItems: number): Promise<number> {
  let erased = 0;
  for (;;) {
    const step = await store.eraseItems(key, batchItems);
    erased += step.erased;
    if (step.done) return erased;
  }
}
