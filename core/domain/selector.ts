/**
 * The strength-aware selector (docs/compaction.md, "What is folded"): which active messages a compaction folds, and how
 * the folded run is cut into summarizer calls that can never overflow the summarizer's window.
 */
import { invalid } from "./errors.js";
import { anchorFor } from "./mode.js";
import { MODE_POLICY } from "./mode-policy.js";
import type { CompactionModeName, Message, Role, ToolCall } from "./model.js";
import { effectiveStrength, type Strength } from "./strength.js";
import { messageChars } from "./tokens.js";
import { foldWholeGroups, uncuttableRuns, type FoldUnit } from "./tool-groups.js";
import type { Tunables } from "./tunables.js";

/** What selection reads of a message; `Message` satisfies it. */
export interface SelectableMessage {
  role: Role;
  content: string;
  tags: readonly string[];
  toolCallId?: string | undefined;
  toolCalls?: readonly ToolCall[] | undefined;
}

/**
 * Whether a message of `strength` may fold in `mode` (before anchor, trigger turn and groups): the
 * mode's `folds` in {@link MODE_POLICY}. SYSTEM messages follow it like any other role: a system
 * prompt that must survive is pinned explicitly, and an untagged substantive SYSTEM note is as
 * foldable as any normal message.
 */
export function foldsByStrength(strength: Strength, mode: CompactionModeName): boolean {
  // Pinned first, before any mode logic: nothing below may ever change that answer.
  if (strength === "pinned") return false;
  if (mode === "NONE") return false;
  return MODE_POLICY[mode].folds.includes(strength);
}

/** Index of the newest USER message (the start of the triggering turn), or `messages.length`. */
export function triggeringTurnStart(messages: readonly Pick<SelectableMessage, "role">[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "USER") return i;
  return messages.length;
}

/**
 * Whether a message is part of a tool exchange: an ASSISTANT message with tool calls, or a TOOL
 * result (answering a visible call or one whose call was folded earlier).
 */
function isToolExchange(m: SelectableMessage): boolean {
  return m.role === "TOOL" || (m.role === "ASSISTANT" && (m.toolCalls?.length ?? 0) > 0);
}

export type NoOpReason = "mode_none" | "keep_recent" | "nothing_eligible";

export interface Selection<M> {
  /** Messages to fold into the summary, oldest first. */
  fold: M[];
  /** Messages that stay active, oldest first. */
  keep: M[];
  /** Why nothing is folded; absent when `fold` is not empty. */
  reason?: NoOpReason;
}

export type SelectorTunables = Pick<Tunables, "keepRecent" | "softAnchor" | "hardAnchor" | "emergencyAnchor"> &
  Partial<Pick<Tunables, "foldCurrentTurn">>;

/**
 * Splits the active messages (oldest first) into what to fold and what to keep. In order:
 * NONE folds nothing; with `keepRecent` messages or fewer nothing folds; the anchor (last K per
 * mode) and the triggering turn stay (the newest USER message and everything after it, except
 * that in HARD and EMERGENCY the turn's tool groups older than the anchor may fold); pinned
 * stays in every mode; the rest follows {@link foldsByStrength}; and a tool group (a call with its
 * results) folds whole or not at all: one member that must stay keeps the whole group. With
 * `unit: "turn"` (the model's fold rules, docs/turns.md "What a fold may keep") the same holds
 * for whole turns, and nothing of the triggering turn folds.
 *
 * @example selectForCompaction(active, "HARD", DEFAULT_TUNABLES).fold
 */
export function selectForCompaction<M extends SelectableMessage = Message>(
  messages: readonly M[],
  mode: CompactionModeName,
  tunables: SelectorTunables,
  unit: FoldUnit = "tool_group",
): Selection<M> {
  const all = [...messages];
  if (mode === "NONE") return { fold: [], keep: all, reason: "mode_none" };
  if (all.length <= tunables.keepRecent) return { fold: [], keep: all, reason: "keep_recent" };

  const n = all.length;
  const anchorStart = n - Math.min(n, anchorFor(mode, tunables));
  const triggerStart = triggeringTurnStart(all);
  const foldsInTurn = MODE_POLICY[mode].foldsCurrentTurn && tunables.foldCurrentTurn !== 0 && unit === "tool_group";
  // docs/compaction.md "Inside the current turn": the turn's own USER message and its non-tool
  // messages always stay; in a mode that folds in the turn (HARD, EMERGENCY) its older tool
  // groups follow the table.
  const protectedByTurn = (i: number) => i >= triggerStart && (i === triggerStart || !foldsInTurn || !isToolExchange(all[i]!));

  const { fold, keep } = foldWholeGroups(
    all,
    (m, i) => i >= anchorStart || protectedByTurn(i) || !foldsByStrength(effectiveStrength(m), mode),
    unit,
  );
  return fold.length === 0 ? { fold, keep, reason: "nothing_eligible" } : { fold, keep };
}

/**
 * The oldest part of a selection that frees at least `tokensToFree`, cut only between whole tool
 * groups wherever their members sit (whole turns with `unit: "turn"`; the `foldTarget` tunable,
 * and trimming an answer): at least the oldest group, and the whole selection when even that is
 * not enough.
 *
 * @example foldOldestUntil(selection.fold, 3_000)
 */
export function foldOldestUntil<M extends SelectableMessage & { tokens: number }>(fold: readonly M[], tokensToFree: number, unit: FoldUnit = "tool_group"): M[] {
  const taken: M[] = [];
  let freed = 0;
  for (const run of uncuttableRuns(fold, unit)) {
    if (taken.length > 0 && freed >= tokensToFree) break;
    taken.push(...run);
    freed += run.reduce((n, m) => n + m.tokens, 0);
  }
  return taken;
}

// ---------------------------------------------------------------------------------------------
// Chunking the fold into summarizer calls
// ---------------------------------------------------------------------------------------------

/** What chunking reads of a message; `Message` and the summarizer's source message satisfy it. */
export interface ChunkableMessage {
  role: Role;
  content: string;
  toolCallId?: string | undefined;
  toolCalls?: readonly ToolCall[] | undefined;
}

/**
 * Characters counted per message on top of its text: the summarizer prompt frames each message
 * with a header (role, id, time, tool call ids), so a chunk of many tiny messages must fit as well.
 */
export const SUMMARY_SOURCE_FRAMING_CHARS = 64;

/** The smallest cap a chunk can have: one framed message with a short stub. */
export const MIN_CHUNK_CHARS = SUMMARY_SOURCE_FRAMING_CHARS + 64;

/** Chars one message takes in a summarizer call: framing + content + tool call names/arguments. */
export function sourceChars(message: ChunkableMessage): number {
  return SUMMARY_SOURCE_FRAMING_CHARS + messageChars(message);
}

/** Appended where text was cut, so the summarizer (and a reader of the summary) knows. */
export function truncationMarker(removedChars: number): string {
  return `\u2026[truncated ${removedChars} chars]`;
}
// Longest marker for any removed count below 10^9 chars (above the 400 KB request limit anyway).
const MARKER_MAX = truncationMarker(999_999_999).length;

/** Keeps the head of `text` within `limit` chars, never splitting a surrogate pair. */
function head(text: string, limit: number): string {
  let end = Math.max(0, limit);
  if (end > 0 && end < text.length) {
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  }
  return text.slice(0, end);
}

/** Per-item limits so the items sum to at most `budget`, cutting only the largest ones. */
function waterFill(lengths: readonly number[], budget: number): number[] {
  const order = lengths.map((len, i) => ({ len, i })).sort((a, b) => a.len - b.len);
  const limits = new Array<number>(lengths.length).fill(0);
  let remaining = Math.max(0, budget);
  order.forEach(({ len, i }, k) => {
    const share = Math.floor(remaining / (order.length - k));
    limits[i] = Math.min(len, share);
    remaining -= limits[i]!;
  });
  return limits;
}

/**
 * A copy of `message` whose {@link sourceChars} is at most `maxChars` (given `maxChars >=
 * SUMMARY_SOURCE_FRAMING_CHARS`), for summarizer input only; stored messages are never changed.
 * The content and tool-call arguments keep their heads, the largest cut first, each cut marked
 * with {@link truncationMarker}. When even that cannot fit (many calls with long names), the
 * message becomes a one-line stub naming its role, size and tool calls.
 */
export function truncateForSummary<M extends ChunkableMessage>(message: M, maxChars: number): M {
  const size = sourceChars(message);
  if (size <= maxChars) return message;

  const calls = message.toolCalls ?? [];
  const pieces = [message.content, ...calls.map((c) => c.arguments)];
  const names = calls.reduce((sum, c) => sum + c.name.length, 0);
  const budget = maxChars - SUMMARY_SOURCE_FRAMING_CHARS - names - MARKER_MAX * pieces.length;
  if (budget >= 0) {
    const limits = waterFill(
      pieces.map((p) => p.length),
      budget,
    );
    const cut = pieces.map((p, k) => {
      if (p.length <= limits[k]!) return p;
      const kept = head(p, limits[k]!);
      return kept + truncationMarker(p.length - kept.length);
    });
    const truncated: ChunkableMessage = { ...message, content: cut[0]! };
    if (message.toolCalls !== undefined) {
      truncated.toolCalls = calls.map((c, k) => ({ ...c, arguments: cut[k + 1]! }));
    }
    return truncated as M;
  }

  const callNote = calls.length > 0 ? `, tool calls: ${calls.map((c) => c.name).join(", ")}` : "";
  const stub = `[${message.role} message of ${size} chars truncated${callNote}]`;
  const { toolCalls: _dropped, ...rest } = message;
  return { ...rest, content: head(stub, maxChars - SUMMARY_SOURCE_FRAMING_CHARS) } as M;
}

export interface SourceChunk<M> {
  /** The original messages of this chunk, oldest first (their ids go to `sourceRefs`). */
  messages: M[];
  /** What the summarizer receives: `messages`, oversize ones truncated to fit. */
  source: M[];
  /** Total {@link sourceChars} of `source`; at most the cap. */
  chars: number;
  /** True when any message of `source` was truncated. */
  truncated: boolean;
}

/**
 * Cuts a selection (oldest first) into summarizer calls of at most `capChars` {@link sourceChars}
 * each, in order, cutting only between the runs of {@link uncuttableRuns} (a tool group with
 * whatever sits between its members stays in one call). A run larger than the cap gets a chunk of
 * its own with its largest messages truncated; only when the cap cannot give each of its members
 * {@link MIN_CHUNK_CHARS} is a (huge) run spread over consecutive chunks, because
 * overflowing the summarizer would fail the whole compaction. Throws `summarizer.cap_too_small`
 * below {@link MIN_CHUNK_CHARS}.
 */
export function chunkBySourceChars<M extends ChunkableMessage>(
  messages: readonly M[],
  capChars: number,
): SourceChunk<M>[] {
  if (!(capChars >= MIN_CHUNK_CHARS)) {
    throw invalid(
      "summarizer.cap_too_small",
      `summarizer input cap ${capChars} is below the minimum of ${MIN_CHUNK_CHARS} chars`,
    );
  }
  const chunks: SourceChunk<M>[] = [];
  let current: M[] = [];
  let currentChars = 0;
  const flush = () => {
    if (current.length > 0) {
      chunks.push({ messages: current, source: current, chars: currentChars, truncated: false });
    }
    current = [];
    currentChars = 0;
  };
  const oversize = (unit: M[]) => {
    flush();
    const limits = waterFill(unit.map(sourceChars), capChars);
    const source = unit.map((m, k) => truncateForSummary(m, limits[k]!));
    const chars = source.reduce((sum, m) => sum + sourceChars(m), 0);
    // truncateForSummary returns the very same object when a message fits untouched.
    chunks.push({ messages: unit, source, chars, truncated: source.some((s, k) => s !== unit[k]) });
  };

  for (const unit of uncuttableRuns(messages)) {
    const size = unit.reduce((sum, m) => sum + sourceChars(m), 0);
    if (size > capChars) {
      if (Math.floor(capChars / unit.length) >= MIN_CHUNK_CHARS) oversize(unit);
      else {
        // A run too large to share one call even as stubs: one message per slot, in order.
        for (const m of unit) {
          const s = sourceChars(m);
          if (s > capChars) oversize([m]);
          else {
            if (currentChars + s > capChars) flush();
            current.push(m);
            currentChars += s;
          }
        }
      }
      continue;
    }
    if (currentChars + size > capChars) flush();
    current.push(...unit);
    currentChars += size;
  }
  flush();
  return chunks;
}
