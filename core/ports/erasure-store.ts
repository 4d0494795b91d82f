/**
 * The erasure port (docs/api.md, "Deleting a process"), part of the Store (store.ts). A module of
 * its own that imports nothing of store.ts, so the two never form a cycle.
 */
import { LATEST_DELIVERY_DAYS } from "../domain/late-delivery.js";
import type { Page } from "../domain/model.js";

type ProcessKey = { tenantId: string; processId: string };
type ListOptions = { limit: number; cursor?: string };

/** Where a deletion stands: items still being erased, or every item but the tombstone gone. */
export type DeletionStatus = "deleting" | "deleted";

/**
 * Deleting a process (docs/api.md, "Deleting a process"): a tombstone on META that every later
 * write for the process fails on, then the erasure of every other item, in as many calls as it
 * takes (a large process erases in the background).
 */
export interface ErasureStore {
  /**
   * Puts the tombstone on META once; repeated, it answers where the deletion stands.
   * `not_found`: no such process.
   */
  markDeleted(key: ProcessKey, at: string): Promise<{ ok: true; status: DeletionStatus } | { ok: false; reason: "not_found" }>;
  /**
   * Erases up to about `limit` items of a process that carries the tombstone: its inbox items, then
   * every item of its partition but META. `done`: nothing but META is left.
   */
  eraseItems(key: ProcessKey, limit: number): Promise<{ erased: number; done: boolean }>;
  /** Once nothing else is left: META becomes the bare tombstone (status `deleted`). */
  finishDeletion(key: ProcessKey): Promise<void>;
  /**
   * A leaving tenant's records outside its processes: its settings, its model usage and budget,
   * and any inbox item left; answers how many items were erased. The erasure mark stays.
   */
  eraseTenantRecords(tenantId: string): Promise<number>;
  /**
   * Marks the tenant as being erased: from now on no model usage of the tenant is recorded (a fold
   * in flight cannot re-create its usage). The mark lapses after TENANT_ERASURE_MARK_DAYS.
   */
  markTenantErased(tenantId: string, at: string): Promise<void>;
  /** Ids of the tenant's processes that no listing shows: imports not yet live, deletions not finished. */
  listUnlistedProcesses(tenantId: string, options: ListOptions): Promise<Page<string>>;
  /**
   * What is left of an erased tenant besides tombstones (bare DELETED META items and the erasure
   * mark): one line per item found, read through the tenant's listings and partitions and the
   * partitions of `processIds`. Empty: the erasure is complete.
   */
  tenantLeftovers(tenantId: string, processIds: readonly string[]): Promise<string[]>;
}

/** How long a tenant's erasure mark refuses model usage: as long as a late job can still come. */
export const TENANT_ERASURE_MARK_DAYS = LATEST_DELIVERY_DAYS;
