/**
 * The fold's lifecycle rules (core/domain/fold/), one table per verdict: which fold is usable,
 * stale, expired, lost, a duplicate, whether a prepared one can commit, and what a refusal means.
 */
import { describe, expect, it } from "vitest";
import { asFold, queuedLifeMs, type PreparedFold, type QueuedFold } from "../../core/domain/fold/lifecycle.js";
import { LATEST_DELIVERY_MS } from "../../core/domain/late-delivery.js";
import { endsRangeJob, retryHelps, wireReason, type FoldRefusal } from "../../core/domain/fold/refusal.js";
import * as rows from "../../core/domain/fold/rows.js";
import { canCommit, isExpired, isLost, isStale, jobFold, judgeFolds, STALE } from "../../core/domain/fold/usability.js";
import type { Memory, Message } from "../../core/domain/model.js";
import type { ActiveView } from "../../core/ports/store.js";

const NOW = Date.parse("2026-01-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function row(id: string, status: Memory["status"], md: Partial<Memory["metadata"]> = {}, sourceRefs: string[] = []): Memory {
  return {
    id,
    processId: "p",
    kind: "ARCHIVED_CHAT",
    status,
    content: "",
    sourceRefs,
    metadata: { compactedMessages: 0, provider: "", model: "", job: "prepare", preparedFor: "HARD", queuedAt: iso(NOW - 1000), expiresAt: iso(NOW + 60_000), queuedAtVersion: 3, ...md },
    createdAt: iso(NOW - 1000),
    supersededAt: null,
    tokens: 0,
  };
}

const msg = (id: string, tags: string[] = []): Message => ({ id, processId: "p", role: "USER", content: id, tags, createdAt: iso(NOW), archivedInMemoryId: null, tokens: 10 }) as Message;
const summary = (id: string) => ({ ...row(id, "OK"), metadata: { compactedMessages: 1, provider: "", model: "" } });
const view = (o: { version?: number; active?: string | null; folds?: Memory[]; messages?: Message[] } = {}): ActiveView =>
  ({
    state: { version: o.version ?? 3 },
    summaries: o.active ? [summary(o.active)] : [],
    folds: o.folds ?? [],
    messages: o.messages ?? [],
  }) as unknown as ActiveView;

const queued = (md: Partial<Memory["metadata"]> = {}) => asFold(row("f1", "QUEUED", md)) as QueuedFold;
const prepared = (md: Partial<Memory["metadata"]> = {}, refs: string[] = []) => asFold(row("f1", "PREPARED", md, refs)) as PreparedFold;

describe("reading a stored fold", () => {
  it.each([
    ["a queued prepare job keeps its mode and version", row("f", "QUEUED", { preparedFor: "SOFT" }), { status: "QUEUED", job: "prepare", mode: "SOFT", queuedAtVersion: 3 }],
    ["a row without preparedFor is a HARD fold", row("f", "QUEUED", { preparedFor: undefined }), { mode: "HARD" }],
    ["a range job's mode is RANGE", row("f", "QUEUED", { job: "range", preparedFor: "RANGE" }), { job: "range", mode: "RANGE" }],
    ["a prepared fold chains the summary it superseded", row("f", "PREPARED", { supersededMemoryId: "s1" }), { chains: "s1", extended: false }],
    ["an extended fold says so", row("f", "PREPARED", { extended: { messages: 2, at: iso(NOW) } }), { extended: true }],
    ["a settled row never expires", row("f", "OK"), { status: "OK", expiresAt: null }],
  ])("%s", (_name, m, expected) => {
    expect(asFold(m)).toMatchObject(expected);
  });
});

describe("expired, lost, stale", () => {
  it.each([
    ["expires at its time", { expiresAt: iso(NOW) }, true],
    ["not before", { expiresAt: iso(NOW + 1) }, false],
    ["without a time, never", { expiresAt: undefined }, false],
  ])("expired: %s", (_n, md, expected) => expect(isExpired(queued(md), NOW)).toBe(expected));

  it.each([
    ["a queued fold no worker took within the timeout", queued({ queuedAt: iso(NOW - 5000) }), true],
    ["a queued fold still within it", queued({ queuedAt: iso(NOW - 4999) }), false],
    ["a prepared fold is never lost", prepared({ queuedAt: iso(NOW - 10_000) }), false],
  ])("lost: %s", (_n, fold, expected) => expect(isLost(fold, NOW, 5000)).toBe(expected));

  it.each([
    ["a queued fold on its own version", queued(), view({ version: 3 }), false],
    ["a queued fold after the version moved", queued(), view({ version: 4 }), true],
    ["a range job on any version", queued({ job: "range", preparedFor: "RANGE" }), view({ version: 9 }), false],
    ["a prepared fold chaining the active summary", prepared({ supersededMemoryId: "s1" }), view({ active: "s1" }), false],
    ["a prepared fold chaining another summary", prepared({ supersededMemoryId: "s0" }), view({ active: "s1" }), true],
    ["a prepared fold chaining none while one is active", prepared(), view({ active: "s1" }), true],
  ])("stale: %s", (_n, fold, v, expected) => expect(isStale(fold, v)).toBe(expected));
});

describe("a turn's verdict on the view's folds", () => {
  const verdict = (folds: Memory[], v: Partial<Parameters<typeof view>[0]> = {}) => {
    const out = judgeFolds(view({ ...v, folds }), NOW, 5000);
    return { live: out.live?.id ?? null, discard: out.discard.map((d) => [d.fold.id, d.reason.split(":")[0], d.outcome]) };
  };

  it.each([
    ["nothing to judge", [], { live: null, discard: [] }],
    ["an expired fold is discarded as expired", [row("a", "QUEUED", { expiresAt: iso(NOW) })], { live: null, discard: [["a", "expired", "expired"]] }],
    ["a lost one as a queue timeout", [row("a", "QUEUED", { queuedAt: iso(NOW - 6000) })], { live: null, discard: [["a", "queue_timeout", "discarded"]] }],
    ["a stale one as stale", [row("a", "QUEUED", { queuedAtVersion: 2 })], { live: null, discard: [["a", "stale", "discarded"]] }],
    ["a prepared fold is kept over a queued one", [row("a", "QUEUED"), row("b", "PREPARED")], { live: "b", discard: [["a", "duplicate", "discarded"]] }],
    ["of two queued the oldest is kept", [row("a", "QUEUED"), row("b", "QUEUED")], { live: "a", discard: [["b", "duplicate", "discarded"]] }],
    ["a manual job comes first and is no duplicate", [row("a", "PREPARED"), row("m", "QUEUED", { job: "manual" })], { live: "m", discard: [] }],
    ["an overdue manual job is kept for its late request, and no turn waits for it", [row("m", "QUEUED", { job: "manual", queuedAt: iso(NOW - 6000) }), row("a", "QUEUED")], { live: "a", discard: [] }],
    ["a stale manual job is discarded", [row("m", "QUEUED", { job: "manual", queuedAtVersion: 2 })], { live: null, discard: [["m", "stale", "discarded"]] }],
    ["a range job is left alone", [row("r", "QUEUED", { job: "range", preparedFor: "RANGE", queuedAtVersion: 1, expiresAt: iso(NOW) })], { live: null, discard: [] }],
  ])("%s", (_n, folds, expected) => {
    expect(verdict(folds)).toEqual(expected);
  });

  it("discards as the stale reason every reader writes", () => {
    expect(judgeFolds(view({ version: 4, folds: [row("a", "QUEUED")] }), NOW, 5000).discard[0]!.reason).toBe(STALE);
  });
});

describe("a queued fold's life", () => {
  it.each([
    ["a turn's job lives as a prepared fold", "prepare", 3_600_000],
    ["a manual job as long as its request can arrive", "manual", LATEST_DELIVERY_MS],
    ["a range job as long as its request can arrive", "range", LATEST_DELIVERY_MS],
  ] as const)("%s", (_n, job, ms) => expect(queuedLifeMs(job, 3_600_000)).toBe(ms));
});

describe("a worker job's verdict on its row", () => {
  it.each([
    ["gone", null, "QUEUED", { skipped: "fold not found" }],
    ["in another status", asFold(row("f", "OK")), "QUEUED", { skipped: "fold is OK" }],
    ["expired: discarded", asFold(row("f", "QUEUED", { expiresAt: iso(NOW) })), "QUEUED", { skipped: "expired", discard: { reason: "expired", outcome: "expired" } }],
    ["usable", asFold(row("f", "PREPARED")), "PREPARED", { fold: { id: "f", status: "PREPARED" } }],
  ] as const)("%s", (_n, fold, status, expected) => {
    expect(jobFold(fold, status, NOW)).toMatchObject(expected);
  });
});

describe("whether a prepared fold can commit", () => {
  const weak = msg("m1", ["STRENGTH:weak"]);
  const strong = msg("m2", ["STRENGTH:strong"]);
  it.each([
    ["it chains the active summary and its messages are foldable", prepared({ supersededMemoryId: "s1" }, ["m1"]), [weak], "HARD", { ok: true }],
    ["the active summary changed since", prepared({ supersededMemoryId: "s0" }, ["m1"]), [weak], "HARD", { ok: false, discard: expect.stringMatching(/^stale: it no longer chains/) }],
    ["it covers a message the read does not know: read again", prepared({ supersededMemoryId: "s1" }, ["m1", "mX"]), [weak], "HARD", { ok: false, readAgain: true }],
    ["a covered message is too strong for the mode it commits as", prepared({ supersededMemoryId: "s1", preparedFor: "EMERGENCY" }, ["m2"]), [strong], "HARD", { ok: false, discard: expect.stringMatching(/pinned or made stronger/) }],
    ["a strong message folds in EMERGENCY prepared for EMERGENCY", prepared({ supersededMemoryId: "s1", preparedFor: "EMERGENCY" }, ["m2"]), [strong], "EMERGENCY", { ok: true }],
    ["a pinned message never folds", prepared({ supersededMemoryId: "s1", preparedFor: "EMERGENCY" }, ["m3"]), [msg("m3", ["STRENGTH:pinned"])], "EMERGENCY", { ok: false, discard: expect.any(String) }],
  ] as const)("%s", (_n, fold, messages, mode, expected) => {
    expect(canCommit(fold, view({ active: "s1", messages: [...messages] }), mode)).toMatchObject(expected);
  });
});

describe("a refusal: the wire reason and whether a retry helps", () => {
  const budget = { dailyTokens: 10, usedTokens: 10, neededTokens: 5, day: "2026-01-01", resetsAt: "2026-01-02T00:00:00.000Z" };
  it.each<[FoldRefusal, string, boolean, boolean]>([
    [{ kind: "lease", refusal: "leased" }, "compaction_in_progress", true, false],
    [{ kind: "lease", refusal: "version_changed" }, "concurrent_compaction", true, false],
    [{ kind: "lease", refusal: "not_found" }, "concurrent_compaction", true, false],
    [{ kind: "lease", refusal: "revert_hold" }, "reverted_recently", false, false],
    [{ kind: "commit_conflict" }, "commit_conflict", true, false],
    [{ kind: "budget", refusal: budget }, "budget_exceeded", false, true],
    [{ kind: "summary", code: "provider_timeout", memoryId: "m" }, "summarizer_failed: provider_timeout", false, false],
    [{ kind: "summary", code: "summarizer_call_cap: needs 9 calls", memoryId: "m", limit: "call_cap" }, "summarizer_failed: summarizer_call_cap: needs 9 calls", false, true],
    [{ kind: "summary", code: "summarizer_merge_stalled: round 2", memoryId: "m", limit: "merge_stalled" }, "summarizer_failed: summarizer_merge_stalled: round 2", false, true],
    // The kind is the typed field, never read back from the code's words.
    [{ kind: "summary", code: "summarizer_call_cap: a provider's words", memoryId: "m" }, "summarizer_failed: summarizer_call_cap: a provider's words", false, false],
    [{ kind: "too_large", memoryId: "m" }, expect.stringMatching(/^summary_too_large/) as never, false, true],
    [{ kind: "unwanted", reason: "abandoned" }, "abandoned", false, false],
  ])("%o", (refusal, reason, retry, endsRange) => {
    expect(wireReason(refusal)).toEqual(reason);
    expect(retryHelps(refusal)).toBe(retry);
    expect(endsRangeJob(refusal)).toBe(endsRange);
  });
});

describe("the rows of the transitions", () => {
  const at = new Date(NOW);
  it("a queued row records its state, mode, job and life", () => {
    const q = rows.queued({ id: "f", processId: "p", at, ttlMs: 1000, version: 7, mode: "SOFT", job: "prepare", contextWindow: 100 });
    expect(q).toMatchObject({ status: "QUEUED", metadata: { preparedFor: "SOFT", job: "prepare", queuedAtVersion: 7, expiresAt: iso(NOW + 1000), contextWindow: 100 } });
    expect(asFold(q)).toMatchObject({ status: "QUEUED", mode: "SOFT", queuedAtVersion: 7 });
  });

  it("a prepared fold committed drops its life and discard fields and says how it was made", () => {
    const p = row("f", "PREPARED", { discardReason: "x" });
    const ok = rows.fromPrepared(p, at, { mode: "HARD", producedBy: "worker", tokensBefore: 50 });
    expect(ok.status).toBe("OK");
    expect(ok.metadata).not.toHaveProperty("expiresAt");
    expect(ok.metadata).not.toHaveProperty("discardReason");
    expect(ok.metadata).toMatchObject({ mode: "HARD", producedBy: "worker", tokensBefore: 50 });
  });

  it("an undone summary is REVERTED with its time", () => {
    expect(rows.reverted(row("s", "OK"), iso(NOW))).toMatchObject({ status: "REVERTED", metadata: { revertedAt: iso(NOW) } });
  });
});
