/** Tool groups and where a message list may be cut (core/domain/tool-groups.ts). */
import { describe, expect, it } from "vitest";
import type { Message, Role } from "../../core/domain/model.js";
import { foldWholeGroups, toolGroups, uncuttableRuns } from "../../core/domain/tool-groups.js";

const m = (id: string, role: Role, extra: Partial<Message> = {}): Message => ({
  id,
  processId: "p",
  role,
  content: id,
  tags: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 1,
  ...extra,
});
const call = (id: string, ...callIds: string[]) => m(id, "ASSISTANT", { toolCalls: callIds.map((c) => ({ id: c, name: "grep", arguments: "{}" })) });
const result = (id: string, callId: string) => m(id, "TOOL", { toolCallId: callId });
const ids = (runs: Message[][]) => runs.map((r) => r.map((x) => x.id));

describe("toolGroups", () => {
  it("groups a call with its result across another message; the list is cut only around both", () => {
    const list = [call("call", "c1"), m("note", "SYSTEM"), result("result", "c1"), m("d", "USER")];
    expect(toolGroups(list)).toEqual({ group: [0, 1, 0, 3], runs: [[0, 3], [3, 4]] });
  });

  it("keeps parallel calls of one message with all their results, in any order", () => {
    const list = [call("a", "c1", "c2"), result("t2", "c2"), m("note", "ASSISTANT"), result("t1", "c1")];
    expect(toolGroups(list).group).toEqual([0, 0, 2, 0]);
    expect(ids(uncuttableRuns(list))).toEqual([["a", "t2", "note", "t1"]]);
  });

  it("makes parallel calls in separate messages separate groups, but one run while their results overlap", () => {
    const list = [call("a1", "c1"), call("a2", "c2"), result("t2", "c2"), result("t1", "c1"), m("e", "USER")];
    expect(toolGroups(list).group).toEqual([0, 1, 1, 0, 4]);
    expect(ids(uncuttableRuns(list))).toEqual([["a1", "a2", "t2", "t1"], ["e"]]);
  });

  it("leaves a result whose call was folded earlier, and a call still running, on their own", () => {
    const list = [result("late", "gone"), call("running", "c9"), m("note", "USER")];
    expect(toolGroups(list)).toEqual({ group: [0, 1, 2], runs: [[0, 1], [1, 2], [2, 3]] });
  });

  it("foldWholeGroups keeps a whole group when one member must stay", () => {
    const list = [call("call", "c1"), m("note", "SYSTEM"), result("result", "c1"), m("d", "USER")];
    const split = foldWholeGroups(list, (x) => x.id === "result");
    expect(split.fold.map((x) => x.id)).toEqual(["note", "d"]);
    expect(split.keep.map((x) => x.id)).toEqual(["call", "result"]);
  });

  it("has no runs for an empty list", () => {
    expect(toolGroups([])).toEqual({ group: [], runs: [] });
  });
});
