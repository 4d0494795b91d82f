/**
 * Whether a turn's prompt is the previous turn's plus what was appended (docs/turns.md,
 * "Append-only between folds"). Everything that decides the replay besides the appended messages
 * either changes only with the replay epoch (a fold, an undo: META records the epoch and its
 * reason in the same write) or is summed up in the turn's {@link ReplayMark}, which the turn
 * stores when it differs from the last one. The verdict compares the two marks. Pure.
 */
import { createHash } from "node:crypto";
import * as z from "./zod.js";

/** Why a turn's prompt does not start with the previous turn's (docs/api.md, `prefix.reason`). */
export const PREFIX_REASONS = ["first_turn", "fold", "revert", "format", "trim", "clear", "parent", "recall", "tool_result", "block_refused"] as const;
export const PrefixReason = z.enum(PREFIX_REASONS);
export type PrefixReason = z.infer<typeof PrefixReason>;

/** The reasons a replay epoch moves for: the writes that change the replay's base in one go. */
export type EpochReason = Extract<PrefixReason, "fold" | "revert">;

/** The most missing-result placeholders a mark lists; past it any change counts as a break. */
export const MARK_MAX_OPEN = 16;

/**
 * What decided one turn's prompt besides the appended messages, small enough to ride on META:
 * the replay epoch it was built at, the format, digests of the memory block's parts, where a
 * trim cut, how many results showed as cleared, and the placeholders of calls without results.
 */
export const ReplayMark = z.object({
  epoch: z.int(),
  /** The turn's `format`, or `plain` for the `messages` and `context` answer. */
  format: z.string(),
  /** Digest of the memory block's static part (the summary, the parent context). */
  head: z.string(),
  /** Digest of the recall section when it rides in the system prompt ("" when it does not). */
  recall: z.string(),
  /** The messages a trimmed answer left out (`from..to:count`); absent when nothing was trimmed. */
  trim: z.optional(z.string()),
  /** Cleared results the replay showed as placeholders. */
  cleared: z.int(),
  /** Ids of the missing-result placeholders the replay showed (at most MARK_MAX_OPEN; `null`: more). */
  open: z.nullable(z.array(z.string())),
  /**
   * When the first turn at this epoch began: assistant turns created before it were answers to a
   * prompt of an earlier epoch (docs/turns.md, "What a fold may keep"). Absent at epoch 0.
   */
  since: z.optional(z.string()),
});
export type ReplayMark = z.infer<typeof ReplayMark>;

/** What a turn answers as `prefix`. */
export interface PrefixAnswer {
  kept: boolean;
  reason?: PrefixReason;
  /**
   * The fold was cut before an unfinished tool loop's newest call turn, which the request sends
   * with the thinking it was issued with before the fold (docs/turns.md, "What a fold may keep").
   */
  openLoop?: { messageId: string };
}

/** A short digest of a text: 16 hex characters of its SHA-256 ("" for the empty text). */
export function digest(text: string): string {
  return text === "" ? "" : createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** The part of a turn the mark is made of. */
export interface MarkInput {
  epoch: number;
  format: string;
  staticBlock: string;
  /** The recall text the system prompt carries ("" when recall is in the transcript or empty). */
  systemRecall: string;
  trimmed?: { messages: number; fromMessageId?: string; toMessageId?: string } | undefined;
  /** The replay as answered: cleared results and missing-result placeholders are read off it. */
  replay: ReadonlyArray<{ id: string; cleared?: unknown; missingResult?: true }>;
  since?: string | undefined;
}

/** The mark of a turn about to be answered. */
export function replayMark(input: MarkInput): ReplayMark {
  const open = input.replay.filter((m) => m.missingResult).map((m) => m.id);
  const t = input.trimmed;
  return {
    epoch: input.epoch,
    format: input.format,
    head: digest(input.staticBlock),
    recall: digest(input.systemRecall),
    ...(t && t.messages > 0 ? { trim: `${t.fromMessageId ?? ""}..${t.toMessageId ?? ""}:${t.messages}` } : {}),
    cleared: input.replay.filter((m) => m.cleared !== undefined).length,
    open: open.length > MARK_MAX_OPEN ? null : open,
    ...(input.since !== undefined ? { since: input.since } : {}),
  };
}

/**
 * Whether the prompt of the turn marked `now` starts with the one of the turn marked `previous`.
 * A placeholder may be added (a new call without its result) but never leave: the result that
 * replaces it arrives elsewhere in the replay.
 *
 * @param epochReason what META says moved the epoch last
 * @example prefixVerdict(undefined, mark) // { kept: false, reason: "first_turn" }
 */
export function prefixVerdict(previous: ReplayMark | undefined, now: ReplayMark, epochReason: EpochReason | undefined): PrefixAnswer {
  if (!previous) return { kept: false, reason: "first_turn" };
  if (previous.epoch !== now.epoch) return { kept: false, reason: epochReason ?? "fold" };
  if (previous.format !== now.format) return { kept: false, reason: "format" };
  if (previous.trim !== now.trim) return { kept: false, reason: "trim" };
  if (previous.head !== now.head) return { kept: false, reason: "parent" };
  if (previous.recall !== now.recall) return { kept: false, reason: "recall" };
  if (previous.cleared !== now.cleared) return { kept: false, reason: "clear" };
  if (previous.open === null || now.open === null) {
    if (previous.open !== now.open) return { kept: false, reason: "tool_result" };
  } else if (!previous.open.every((id) => now.open!.includes(id))) {
    return { kept: false, reason: "tool_result" };
  }
  return { kept: true };
}

const MARK_FIELDS = ["epoch", "format", "head", "recall", "trim", "cleared", "open", "since"] as const satisfies ReadonlyArray<keyof ReplayMark>;

/** True when two marks differ in anything a later verdict reads (the turn then stores the new one). */
export function markChanged(previous: ReplayMark | undefined, now: ReplayMark): boolean {
  if (!previous) return true;
  return MARK_FIELDS.some((k) => JSON.stringify(previous[k] ?? null) !== JSON.stringify(now[k] ?? null));
}

/**
 * When the first turn at replay epoch `epoch` began: the last turn's mark says so while the epoch
 * has not moved since; otherwise this turn is the first, begun at `startedAt`. Absent at epoch 0.
 */
export function epochSince(previous: ReplayMark | undefined, epoch: number, startedAt: string): string | undefined {
  if (epoch === 0) return undefined;
  return previous?.epoch === epoch && previous.since !== undefined ? previous.since : startedAt;
}

/**
 * The process's `prompt_cache_key` for OpenAI requests (docs/turns.md, "Prompt caching"): stable
 * for the process, the same for every turn, and naming neither tenant nor process.
 */
export function promptCacheKey(key: { tenantId: string; processId: string }): string {
  return `vm-${digest(`${key.tenantId}/${key.processId}`)}`;
}
