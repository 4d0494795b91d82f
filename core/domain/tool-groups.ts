/**
 * Tool groups (docs/compaction.md, "Never an orphan"): an ASSISTANT message with tool calls and the
 * TOOL messages that answer them are kept, folded or left out together, wherever they sit in the
 * list. This module is the one place that decides which messages belong together and where a list
 * of messages may be cut: selection, fold sizing, trimming, chunking, range selection, clearing and
 * the replay all ask it.
 */
import type { Role, ToolCall } from "./model.js";

/** What grouping reads of a message; `Message` satisfies it. */
export interface GroupableMessage {
  role: Role;
  toolCallId?: string | undefined;
  /** Every call a message answers when it answers several (native content: docs/api.md). */
  toolCallIds?: readonly string[] | undefined;
  toolCalls?: readonly Pick<ToolCall, "id">[] | undefined;
}

/**
 * The calls a message answers: a TOOL message's `toolCallId`, or every id of `toolCallIds` (a
 * provider's user message may answer calls beside its own text).
 */
export function answeredCallIds(m: GroupableMessage): readonly string[] {
  if (m.toolCallIds !== undefined && (m.role === "TOOL" || m.role === "USER")) return m.toolCallIds;
  return m.role === "TOOL" && m.toolCallId !== undefined ? [m.toolCallId] : [];
}

export interface ToolGroups {
  /**
   * Per message: the index of the ASSISTANT message whose call it answers, else its own index. A
   * call message and its results share an index wherever the results sit (other messages in
   * between, results in any order, several calls in one message). Parallel calls made in separate
   * ASSISTANT messages are separate groups. A result answers the nearest earlier call with its id;
   * a result whose call is not in the list (folded earlier) and a call whose results have not
   * arrived (still running) are groups of their own.
   */
  group: number[];
  /**
   * The shortest runs of consecutive messages that no group crosses, as `[start, end)` index pairs,
   * oldest first, covering the whole list: a list may be cut between two runs and nowhere else. A
   * run is a message alone, or a group with everything between its members (and, when groups
   * overlap, all of them).
   */
  runs: Array<readonly [start: number, end: number]>;
}

/**
 * The tool groups of `messages` (oldest first) and the places the list may be cut. Linear time.
 *
 * @example toolGroups([call("c1"), note, result("c1"), d]).runs // [[0, 3], [3, 4]]
 */
export function toolGroups(messages: readonly GroupableMessage[]): ToolGroups {
  const callOwner = new Map<string, number>();
  const group = messages.map((m, i) => {
    if (m.role === "ASSISTANT" && m.toolCalls !== undefined) {
      for (const call of m.toolCalls) callOwner.set(call.id, i);
      return i;
    }
    // A message answering several calls joins the group of the newest call it answers.
    let owner = i;
    for (const id of answeredCallIds(m)) {
      const o = callOwner.get(id);
      if (o !== undefined && (owner === i || o > owner)) owner = o;
    }
    return owner;
  });
  // A group starts at its call, so a cut after message i is clean when no group that has a member
  // at or before i has one after it.
  const lastMember = group.map((_, i) => i);
  group.forEach((g, i) => (lastMember[g] = i));
  const runs: Array<readonly [number, number]> = [];
  let start = 0;
  let reach = -1;
  group.forEach((g, i) => {
    reach = Math.max(reach, lastMember[g]!);
    if (reach === i) {
      runs.push([start, i + 1]);
      start = i + 1;
    }
  });
  return { group, runs };
}

/**
 * What a fold keeps whole (docs/turns.md, "What a fold may keep"): a tool group, or (for models
 * that need it, `foldRulesFor`) a whole turn, a USER message and everything after it up to the
 * next USER message, with any tool group that reaches past it.
 */
export type FoldUnit = "tool_group" | "turn";

/**
 * Per message, the first index of the shortest run of whole turns it sits in: the list cut only
 * before a USER message where {@link toolGroups} allows a cut (a result that arrived after the
 * next USER message keeps both turns together). Messages before the first USER message are a
 * turn of their own.
 */
function turnGroups(messages: readonly GroupableMessage[]): number[] {
  const group = new Array<number>(messages.length);
  let start = 0;
  for (const [from, to] of toolGroups(messages).runs) {
    if (from > 0 && messages[from]!.role === "USER") start = from;
    for (let i = from; i < to; i++) group[i] = start;
  }
  return group;
}

/** The group of each message by `unit`: its tool group's call, or its turn's first message. */
function unitGroups(messages: readonly GroupableMessage[], unit: FoldUnit): number[] {
  return unit === "turn" ? turnGroups(messages) : toolGroups(messages).group;
}

/**
 * Splits `messages` into what folds and what stays, by whole groups (whole turns with `unit:
 * "turn"`): a group stays when any of its members must (`stays`), and folds otherwise. Both keep
 * the input order.
 */
export function foldWholeGroups<M extends GroupableMessage>(
  messages: readonly M[],
  stays: (message: M, index: number) => boolean,
  unit: FoldUnit = "tool_group",
): { fold: M[]; keep: M[] } {
  const group = unitGroups(messages, unit);
  const staying = new Set<number>();
  messages.forEach((m, i) => {
    if (stays(m, i)) staying.add(group[i]!);
  });
  const fold: M[] = [];
  const keep: M[] = [];
  messages.forEach((m, i) => (staying.has(group[i]!) ? keep : fold).push(m));
  return { fold, keep };
}

/**
 * The runs of {@link toolGroups} (whole turns with `unit: "turn"`) as lists of messages: the
 * pieces a list may be cut into. `messages` must hold whole groups (a selection does), or a result
 * whose call was left out stands alone.
 */
export function uncuttableRuns<M extends GroupableMessage>(messages: readonly M[], unit: FoldUnit = "tool_group"): M[][] {
  if (unit === "tool_group") return toolGroups(messages).runs.map(([start, end]) => messages.slice(start, end));
  const runs: M[][] = [];
  turnGroups(messages).forEach((start, i) => (start === i ? runs.push([messages[i]!]) : runs[runs.length - 1]!.push(messages[i]!)));
  return runs;
}
