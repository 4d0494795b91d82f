/** META's roll-forward marker (docs/compaction.md, "The commit protocol"). */

/**
 * Which way a roll-forward goes: `archive` finishes a fold, `restore` finishes an undo. META's
 * marker names both the memory and the direction (`archive:<memoryId>`), so a condition on the
 * marker tells a fold's roll-forward from the undo of the same memory. A bare memory id is a
 * marker written before directions existed: its direction follows the memory's status.
 */
export type RollForwardDirection = "archive" | "restore";

export const rollForwardMarker = (direction: RollForwardDirection, memoryId: string) => `${direction}:${memoryId}`;

export function parseRollForwardMarker(raw: string): { memoryId: string; direction: RollForwardDirection | null } {
  const colon = raw.indexOf(":");
  const direction = raw.slice(0, colon);
  if (colon > 0 && (direction === "archive" || direction === "restore")) return { memoryId: raw.slice(colon + 1), direction };
  return { memoryId: raw, direction: null };
}
