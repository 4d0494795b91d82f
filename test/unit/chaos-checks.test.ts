/**
 * The chaos harness's ledger check (tools/chaos/checks.ts) on hand-built snapshots: a message
 * nobody appended is only accepted as the SYSTEM marker of a range fold, and only while that fold
 * is the replayed summary or after an undo archived the marker into it (docs/compaction.md,
 * "Undoing a compaction").
 */
import { describe, expect, it } from "vitest";
import type { Memory, Message } from "../../core/domain/model.js";
import { emptyLedger, ledgerViolations } from "../../tools/chaos/checks.js";
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
