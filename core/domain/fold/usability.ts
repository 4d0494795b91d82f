/**
 * Whether a background fold can still be used, in one place (docs/compaction.md, "A fold's
 * states"): expired, lost in the queue, stale, a duplicate, whether a prepared one can commit, and
 * whether it covers too little. Pure: the services act on the verdicts.
 */
import type { Message } from "../model.js";
import { planFold } from "../fold-plan.js";
import { tokensAfterFold } from "../fold-size.js";
import { policyOf, type FoldModeName } from "../mode-policy.js";
import { newestSummary, replayTokens } from "../replay.js";
import { foldsByStrength } from "../selector.js";
import { effectiveStrength } from "../strength.js";
import { toolGroups } from "../tool-groups.js";
import { foldWithinCallCap } from "../summary-plan.js";
import type { Tunables } from "../tunables.js";
import type { ActiveView } from "../../ports/store.js";
import { asFold, type Fold, type LiveFold, type PreparedFold, type QueuedFold } from "./lifecycle.js";

/** Why a fold made for an earlier state of the process is discarded. */
export const STALE = "stale: the process changed since it was queued (a compaction, an undo or a strength change)";

/** Why an unusable fold is discarded, as recorded in `discardReason`; `expired` is counted apart. */
export type Discard = { fold: LiveFold; reason: string; outcome: "discarded" | "expired" };

/** The fold's time is up (`queuedLifeMs` after it was queued, `COMPACTION_PREPARED_TTL_MS` after it was prepared). */
export const isExpired = (f: Fold, now: number) => f.expiresAt !== null && f.expiresAt <= now;

/** A QUEUED fold no worker took within `queueTimeoutMs`: its request was lost. */
export const isLost = (f: Fold, now: number, queueTimeoutMs: number) => f.status === "QUEUED" && f.queuedAt + queueTimeoutMs <= now;

/** The summary a prepared fold chains is still the active one. */
export const chainsActive = (f: PreparedFold, view: Pick<ActiveView, "summaries">) => f.chains === (newestSummary(view)?.id ?? null);

/**
 * Made for a state that changed since: a queued fold (not a range job, which runs on any state)
 * queued at another META version; a prepared fold that no longer chains the active summary.
 */
export function isStale(f: LiveFold, view: Pick<ActiveView, "state" | "summaries">): boolean {
  if (f.status === "PREPARED") return !chainsActive(f, view);
  return f.job !== "range" && f.queuedAtVersion !== view.state.version;
}

/**
 * A turn's verdict on the view's folds: the ones to discard (expired, lost, stale, duplicates)
 * and the one the turn waits for or commits. A queued manual job comes first and is never a
 * duplicate (the worker runs it only on the version it was queued for); one still QUEUED after
 * `queueTimeoutMs` is kept for its late request (a caller was answered 202), but the turn no
 * longer waits for it. Of automatic folds a prepared one is kept over a queued one, else the
 * oldest (the one the worker most likely runs already). Range jobs are left alone: no turn
 * discards or waits for them.
 */
export function judgeFolds(view: ActiveView, now: number, queueTimeoutMs: number): { live: LiveFold | null; discard: Discard[] } {
  const discard: Discard[] = [];
  const manual: LiveFold[] = [];
  const automatic: LiveFold[] = [];
  for (const fold of view.folds.map(asFold)) {
    if ((fold.status !== "QUEUED" && fold.status !== "PREPARED") || fold.job === "range") continue;
    const lost = isLost(fold, now, queueTimeoutMs);
    if (isExpired(fold, now)) discard.push({ fold, reason: "expired", outcome: "expired" });
    else if (lost && fold.job !== "manual") discard.push({ fold, reason: "queue_timeout: no worker took it in time", outcome: "discarded" });
    else if (isStale(fold, view)) discard.push({ fold, reason: STALE, outcome: "discarded" });
    else if (fold.job !== "manual") automatic.push(fold);
    else if (!lost) manual.push(fold);
  }
  automatic.sort((a, b) => (a.status === b.status ? (a.id < b.id ? -1 : 1) : a.status === "PREPARED" ? -1 : 1));
  for (const extra of automatic.slice(1)) discard.push({ fold: extra, reason: `duplicate: fold ${automatic[0]!.id} is kept`, outcome: "discarded" });
  // The folds arrive oldest first: the oldest manual job is the one the worker runs next.
  return { live: manual[0] ?? automatic[0] ?? null, discard };
}

/**
 * A worker job's verdict on the row it is for, read afresh: the fold while it still has `status`
 * and has not expired; else why the job ends, and whether the row is discarded as expired.
 */
export function jobFold<S extends LiveFold["status"]>(
  row: Fold | null,
  status: S,
  now: number,
): { fold: Extract<LiveFold, { status: S }> } | { skipped: string; discard?: Discard } {
  if (!row || row.status !== status) return { skipped: row ? `fold is ${row.status}` : "fold not found" };
  const fold = row as Extract<LiveFold, { status: S }>;
  if (isExpired(fold, now)) return { skipped: "expired", discard: { fold, reason: "expired", outcome: "expired" } };
  return { fold };
}

/** A queued prepare or manual job only runs on the state it was queued for. */
export const runsOn = (f: QueuedFold, view: Pick<ActiveView, "state">) => f.job === "range" || f.queuedAtVersion === view.state.version;

/**
 * Whether a PREPARED fold (read with its `sourceRefs`) can commit as `mode` on `view`: it still
 * chains the active summary, and every message it covers is still active and foldable by its
 * strength now, both in the mode it was prepared for and in `mode` (an EMERGENCY fold of strong
 * messages is not committed as a HARD one). A fold covering a message the view does not know is
 * newer than the read (extended since): read again, never discard.
 */
export function canCommit(
  f: PreparedFold,
  view: Pick<ActiveView, "summaries" | "messages">,
  mode: FoldModeName,
): { ok: true; folded: Message[] } | { ok: false; discard: string } | { ok: false; readAgain: true } {
  if (!chainsActive(f, view)) return { ok: false, discard: "stale: it no longer chains the active summary" };
  const active = new Map(view.messages.map((m) => [m.id, m]));
  const folded = f.sourceRefs.map((id) => active.get(id));
  if (folded.some((m) => m === undefined)) return { ok: false, readAgain: true };
  const foldable = (m: Message) => foldsByStrength(effectiveStrength(m), f.mode) && foldsByStrength(effectiveStrength(m), mode);
  if (!(folded as Message[]).every(foldable)) return { ok: false, discard: "stale: a message it covers was folded, pinned or made stronger since" };
  if (splitsAGroup(f.sourceRefs, view.messages)) return { ok: false, discard: "stale: a tool call it covers has a result it does not" };
  return { ok: true, folded: folded as Message[] };
}

/**
 * Whether folding `ids` out of `active` would part a tool call from a result (docs/compaction.md,
 * "Never an orphan"): a call prepared while its result had not arrived, whose result came since.
 */
function splitsAGroup(ids: readonly string[], active: readonly Message[]): boolean {
  const { group } = toolGroups(active);
  const folding = new Set(ids);
  const foldedGroups = new Set(active.flatMap((m, i) => (folding.has(m.id) ? [group[i]!] : [])));
  return active.some((m, i) => !folding.has(m.id) && foldedGroups.has(group[i]!));
}

/**
 * Whether committing `f` (its `sourceRefs` read) would leave the prompt at or above `mode`'s
 * threshold: the messages appended since it was prepared outgrew what it covers.
 */
export function coversTooLittle(view: ActiveView, f: PreparedFold, tunables: Tunables, o: { mode: FoldModeName; tokensBefore: number }): boolean {
  const window = f.memory.metadata.contextWindow;
  if (!window) return false;
  const after = tokensAfterFold(view, { fold: f.sourceRefs.map((id) => ({ id })), tokensBefore: o.tokensBefore }, f.memory.tokens);
  return after / window >= policyOf(o.mode).threshold(tunables);
}

/**
 * The newer messages an extension of `f` adds: what `mode` selects now (never pinned, never the
 * anchor or the current turn, tool groups whole, or turns by the fold's `foldUnit`: `planFold`)
 * minus what the fold covers; a reason
 * instead when it was extended already, would not commit anyway, nothing newer is foldable, or the
 * addition needs more than one summarizer call.
 */
export function extensionOf(view: ActiveView, f: PreparedFold, tunables: Tunables, o: { mode: FoldModeName; tokensBefore: number }): Message[] | string {
  if (f.extended) return "extended already";
  if (!chainsActive(f, view)) return "stale";
  const active = new Set(view.messages.map((m) => m.id));
  if (!f.sourceRefs.every((id) => active.has(id))) return "stale";
  const own = replayTokens(view);
  const unit = f.memory.metadata.foldUnit;
  const plan = planFold(view.messages, o.mode, tunables, { contextWindow: f.memory.metadata.contextWindow, own, tokensBefore: o.tokensBefore, minSaving: false, unit });
  if (!plan.ok) return plan.reason;
  const covered = new Set(f.sourceRefs);
  const added = plan.fold.filter((m) => !covered.has(m.id));
  if (added.length === 0) return "nothing newer to fold";
  // The commit checks every source against the mode the fold was prepared for too (canCommit).
  if (!added.every((m) => foldsByStrength(effectiveStrength(m), f.mode))) return "a newer message is too strong for the prepared mode";
  // One call: a larger addition would delay the commit by two rounds of calls (fold-ahead.ts).
  if (foldWithinCallCap(added, tunables.maxSourceChars, { ...tunables, maxSummarizerCalls: 2 }, unit).cut) return "more than one summarizer call";
  return added;
}
