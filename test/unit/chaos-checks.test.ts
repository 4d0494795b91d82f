/**
 * The chaos harness's checks (tools/chaos/checks.ts) on hand-built snapshots: a message nobody
 * appended is only accepted as the SYSTEM marker of a range fold, and only while that fold is the
 * replayed summary or after an undo archived the marker into it (docs/compaction.md, "Undoing a
 * compaction"); an archived message must be carried by the replay through the supersede chain; a
 * range job that expired is excused only when a clock jump overtook its held request.
 */
import { describe, expect, it } from "vitest";
import { buildSections, renderBlock } from "../../core/domain/context-block.js";
import type { Memory, Message } from "../../core/domain/model.js";
import { archiveChainViolations, emptyLedger, expiredPastItsLife, ledgerViolations, replayViolations } from "../../tools/chaos/checks.js";
import type { Snapshot } from "../../tools/invariants.js";

const key = { tenantId: "t", processId: "p" };

const marker = (archivedInMemoryId: string | null): Message => ({
  id: "msg_01A.r",
  processId: "p",
  role: "SYSTEM",
  content: '[compaction] Topic "export" was completed; 3 messages were folded into the conversation summary.',
  tags: ["RECOMPACTION:export", "STRENGTH:strong"],
  createdAt: "2026-01-01T00:00:00.000Z",
  archivedInMemoryId,
  tokens: 20,
});

const rangeMemory = (status: Memory["status"], topicLabel = "export"): Memory => ({
  id: "mem_range",
  processId: "p",
  kind: "ARCHIVED_CHAT",
  status,
  content: "summary",
  sourceRefs: ["msg_00A", "msg_00B", "msg_00C"],
  metadata: { compactedMessages: 3, provider: "chaos", model: "chaos-fake", recompaction: true, topicLabel, mode: "RANGE" },
  createdAt: "2026-01-01T00:00:01.000Z",
  supersededAt: null,
  tokens: 5,
});

const snapshot = (messages: Message[], memories: Memory[]): Snapshot => ({ key, state: null, messages, memories, view: null });
const NO_ORIGIN = /has no known origin/;

describe("ledgerViolations and range markers", () => {
  it("accepts the marker of the replayed range summary", () => {
    expect(ledgerViolations(snapshot([marker(null)], [rangeMemory("OK")]), emptyLedger())).toEqual([]);
  });

  it("accepts a marker an undo archived into its REVERTED range summary", () => {
    expect(ledgerViolations(snapshot([marker("mem_range")], [rangeMemory("REVERTED")]), emptyLedger())).toEqual([]);
  });

  it("flags a marker still active after its range summary was undone, or one with no range summary of its topic", () => {
    const stillActive = ledgerViolations(snapshot([marker(null)], [rangeMemory("REVERTED")]), emptyLedger());
    expect(stillActive.join("\n")).toMatch(NO_ORIGIN);
    const otherTopic = ledgerViolations(snapshot([marker("mem_range")], [rangeMemory("REVERTED", "billing")]), emptyLedger());
    expect(otherTopic.join("\n")).toMatch(NO_ORIGIN);
    const failedOnly = ledgerViolations(snapshot([marker(null)], [rangeMemory("FAILED")]), emptyLedger());
    expect(failedOnly.join("\n")).toMatch(NO_ORIGIN);
  });
});

describe("archiveChainViolations", () => {
  const message = (id: string, archivedInMemoryId: string | null): Message => ({ ...marker(archivedInMemoryId), id, role: "USER", tags: [] });
  const memory = (id: string, status: Memory["status"], links: { prior?: string; next?: string } = {}): Memory => ({
    ...rangeMemory(status),
    id,
    sourceRefs: [],
    metadata: { compactedMessages: 0, provider: "chaos", model: "chaos-fake", ...(links.prior ? { supersededMemoryId: links.prior } : {}) },
    supersededAt: links.next ? "2026-01-01T00:00:02.000Z" : null,
    ...(links.next ? { supersededByMemoryId: links.next } : {}),
  });
  const state = (activeSummaryId: string | null) => ({ activeSummaryId }) as Snapshot["state"];
  const check = (messages: Message[], memories: Memory[], active: string | null) =>
    archiveChainViolations({ key, state: state(active), messages, memories, view: null });

  it("accepts messages archived into the active summary or into a summary it superseded", () => {
    const memories = [memory("mem_1", "OK", { next: "mem_2" }), memory("mem_2", "OK", { prior: "mem_1" })];
    expect(check([message("msg_a", "mem_1"), message("msg_b", "mem_2"), message("msg_c", null)], memories, "mem_2")).toEqual([]);
  });

  it("flags a chain that reaches a REVERTED memory, a missing one, or ends off the active summary", () => {
    const reverted = check([message("msg_a", "mem_1")], [memory("mem_1", "OK", { next: "mem_2" }), memory("mem_2", "REVERTED", { prior: "mem_1" })], null);
    expect(reverted).toEqual(["t/p: messages archived into mem_1 (msg_a among them) are in no replay: the chain reaches REVERTED memory mem_2"]);
    const missing = check([message("msg_a", "mem_1")], [memory("mem_1", "OK", { next: "mem_9" })], null);
    expect(missing.join("\n")).toMatch(/mem_1 is superseded by mem_9, which does not exist/);
    const offChain = check([message("msg_a", "mem_1"), message("msg_b", "mem_1")], [memory("mem_1", "OK"), memory("mem_2", "OK")], "mem_2");
    expect(offChain).toEqual(["t/p: messages archived into mem_1 (msg_a among them) are in no replay: the chain ends at mem_1, the active summary is mem_2"]);
  });
});

describe("replayViolations", () => {
  // A summary whose prior's tail quotes a folded message with heading lines (docs/api.md, the context block).
  const summary = { ...rangeMemory("OK"), content: "S9: folded 4 messages\nbefore: Offline extract\n## Parent Context\nTitle\n---" };
  const composed = (content: string) => {
    const sections = buildSections({ summary: content, parent: null });
    return { ...renderBlock(sections), sections };
  };
  const expected = { block: composed(summary.content).block, summary };

  it("accepts the summary section with its heading lines escaped", () => {
    expect(replayViolations(key, composed(summary.content), expected, "context")).toEqual([]);
  });

  it("reports a replay of another summary", () => {
    const other = replayViolations(key, composed("S8: folded 2 messages"), expected, "context");
    expect(other).toEqual([
      't/p: context: the replayed summary is "S8: folded 2 messages", the newest OK memory is mem_range',
      "t/p: context: the context block differs from the newest OK summary, its ledger and the parent section",
    ]);
  });
});

describe("expiredPastItsLife", () => {
  // The range job of seed 1234's offer: queued, its worker's first attempt failed, and while the
  // retry waited another engine moved the clock 31 days, past the job's 15-day life.
  const queuedAt = "2026-12-02T11:41:11.757Z";
  const job = (o: { status?: Memory["status"]; reason?: string; expiresAt?: string } = {}): Memory => ({
    ...rangeMemory(o.status ?? "DISCARDED"),
    sourceRefs: [],
    metadata: {
      compactedMessages: 0,
      provider: "",
      model: "",
      job: "range",
      preparedFor: "RANGE",
      queuedAt,
      expiresAt: o.expiresAt ?? "2026-12-17T11:41:11.757Z",
      ...(o.status && o.status !== "DISCARDED" ? {} : { discardReason: o.reason ?? "expired" }),
    },
    createdAt: queuedAt,
  });
  const jumpedTo = Date.parse("2027-01-02T11:41:12.686Z");

  it("excuses a job discarded as expired after its full life when its request waited across the jump", () => {
    expect(expiredPastItsLife(job(), jumpedTo)).toBe(true);
  });

  it("flags the same job when no request of it waited across a jump (never sent, or answered before)", () => {
    expect(expiredPastItsLife(job(), undefined)).toBe(false);
  });

  it("flags a job whose held request was overtaken by a jump that left the clock inside its life", () => {
    expect(expiredPastItsLife(job(), Date.parse("2026-12-16T11:41:11.757Z"))).toBe(false);
  });

  it("flags a job that lived less than a late delivery can take (an hour)", () => {
    expect(expiredPastItsLife(job({ expiresAt: "2026-12-02T12:41:11.757Z" }), jumpedTo)).toBe(false);
  });

  it("flags a job that is gone, still queued, or discarded for another reason", () => {
    expect(expiredPastItsLife(null, jumpedTo)).toBe(false);
    expect(expiredPastItsLife(job({ status: "QUEUED" }), jumpedTo)).toBe(false);
    expect(expiredPastItsLife(job({ reason: "stale" }), jumpedTo)).toBe(false);
  });
});
