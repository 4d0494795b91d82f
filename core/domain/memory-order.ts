/**
 * The order memories were committed in (docs/compaction.md, "Range jobs"). A background job keeps
 * the id it was queued under, so a job that waited while another fold committed has the older id
 * of the two: ids do not say which summary is newer. `createdAt` does (the commit stamps it), and
 * the supersede chain is the authority when two stamps tie.
 */
import type { Memory } from "./model.js";

type Stamped = Pick<Memory, "id" | "createdAt">;

/** A sort comparator: the most recently committed first (then the greater id, for a stable order). */
export function newestCommittedFirst(a: Stamped, b: Stamped): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/** The most recently committed of `items`, or null. */
export function newestCommitted<T extends Stamped>(items: readonly T[]): T | null {
  return items.reduce<T | null>((a, b) => (a === null || newestCommittedFirst(b, a) < 0 ? b : a), null);
}
