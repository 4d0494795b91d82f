/**
 * Range selection (docs/compaction.md, "Range jobs"): which active messages a compaction of
 * the time window [from, to] folds, and the SYSTEM marker it leaves. Pure.
 */
import type { Message } from "./model.js";
import { RANGE_MARKER_PREFIX } from "./fields.js";
import { triggeringTurnStart } from "./selector.js";
import { effectiveStrength } from "./strength.js";
import { foldWholeGroups, type FoldUnit } from "./tool-groups.js";

export interface RangeRequest {
  from: string;
  to: string;
  topicLabel: string;
}

/** Whether `m` was created inside the range (both ends included). */
export const inWindow = (m: Pick<Message, "createdAt">, range: Pick<RangeRequest, "from" | "to">) => {
  const t = Date.parse(m.createdAt);
  return t >= Date.parse(range.from) && t <= Date.parse(range.to);
};

export const isRangeMarker = (m: Pick<Message, "tags">) => m.tags.some((t) => t.startsWith(RANGE_MARKER_PREFIX));

/**
 * Active, unpinned messages in the window; a tool group with a member outside (or pinned) stays,
 * and so do earlier range markers, which keeps a repeated range compaction a no-op. Like the
 * sliding window, the range never folds the triggering turn: the newest USER message and
 * everything after it stay, whatever the window says. With `unit: "turn"` (the model's fold rules,
 * docs/turns.md "What a fold may keep") a turn with a message that stays stays whole.
 */
export function selectRange<M extends Message>(messages: readonly M[], range: RangeRequest, unit: FoldUnit = "tool_group"): M[] {
  const turn = triggeringTurnStart(messages);
  return foldWholeGroups(
    messages,
    (m, i) => i >= turn || !inWindow(m, range) || effectiveStrength(m) === "pinned" || isRangeMarker(m),
    unit,
  ).fold;
}

/**
 * The SYSTEM marker of a range fold of `fold.length` messages, ordered right after the range's last
 * message that may fold (the triggering turn never does); null when nothing in the range may fold.
 */
export function rangeMarker(messages: readonly Message[], range: RangeRequest, folded: number, processId: string): Omit<Message, "tokens"> | null {
  const inRange = messages.slice(0, triggeringTurnStart(messages)).filter((m) => inWindow(m, range));
  const last = inRange[inRange.length - 1];
  if (!last) return null;
  return {
    // Sorts right after the range's last message and before anything newer (ids are ULID-ordered).
    id: `${last.id}.r`,
    processId,
    role: "SYSTEM",
    content: `[compaction] Topic "${range.topicLabel}" was completed; ${folded} messages were folded into the conversation summary.`,
    tags: [`${RANGE_MARKER_PREFIX}${range.topicLabel}`, "STRENGTH:strong"],
    createdAt: last.createdAt,
    archivedInMemoryId: null,
  };
}
