/** Range selection (core/domain/range.ts): what a range compaction folds and where its marker goes. */
import { describe, expect, it } from "vitest";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { inWindow, isRangeMarker, rangeMarker, selectRange } from "../../core/domain/range.js";

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
function msg(s: number, role: Role, extra: { tags?: string[]; toolCalls?: ToolCall[]; toolCallId?: string } = {}): Message {
  return { id: `m${String(s).padStart(2, "0")}`, processId: "p1", role, content: `message ${s}`, tags: extra.tags ?? [], createdAt: at(s), archivedInMemoryId: null, tokens: 5, ...extra };
}
const ids = (ms: readonly Message[]) => ms.map((m) => m.id);
const range = (from: number, to: number) => ({ from: at(from), to: at(to), topicLabel: "export" });

describe("selectRange", () => {
  const history = [msg(1, "USER"), msg(2, "ASSISTANT"), msg(3, "USER"), msg(4, "ASSISTANT"), msg(5, "USER"), msg(6, "ASSISTANT"), msg(7, "USER")];

  it("folds the messages created in [from, to], both ends included", () => {
    expect(ids(selectRange(history, range(2, 4)))).toEqual(["m02", "m03", "m04"]);
  });

  it("never folds the triggering turn (the newest USER message and after), whatever the window", () => {
    expect(ids(selectRange(history, range(5, 7)))).toEqual(["m05", "m06"]);
    expect(ids(selectRange(history, range(7, 9)))).toEqual([]);
  });

  it("keeps pinned messages and earlier range markers, so a repeated range is a no-op", () => {
    const pinned = msg(3, "USER", { tags: ["STRENGTH:pinned"] });
    const marker = { ...msg(4, "SYSTEM", { tags: ["RECOMPACTION:export"] }), id: "m04.r" };
    const h = [msg(1, "USER"), msg(2, "ASSISTANT"), pinned, marker, msg(8, "USER")];
    expect(ids(selectRange(h, range(1, 5)))).toEqual(["m01", "m02"]);
    expect(selectRange([marker, msg(8, "USER")], range(1, 5))).toEqual([]);
  });

  it("keeps a tool group whole: a group reaching outside the window stays", () => {
    const call = msg(3, "ASSISTANT", { toolCalls: [{ id: "c1", name: "read", arguments: "{}" }] });
    const result = msg(5, "TOOL", { toolCallId: "c1" });
    const h = [msg(1, "USER"), msg(2, "ASSISTANT"), call, result, msg(6, "ASSISTANT"), msg(9, "USER")];
    expect(ids(selectRange(h, range(1, 4)))).toEqual(["m01", "m02"]);
    expect(ids(selectRange(h, range(1, 6)))).toEqual(["m01", "m02", "m03", "m05", "m06"]);
  });
});

describe("rangeMarker", () => {
  it("sorts right after the range's last foldable message and says how many were folded", () => {
    const h = [msg(1, "USER"), msg(2, "ASSISTANT"), msg(3, "USER"), msg(4, "ASSISTANT"), msg(9, "USER")];
    const marker = rangeMarker(h, range(1, 4), 4, "p1")!;
    expect(marker).toMatchObject({ id: "m04.r", role: "SYSTEM", createdAt: at(4), tags: ["RECOMPACTION:export", "STRENGTH:strong"] });
    expect(marker.content).toContain("4 messages");
    expect(isRangeMarker(marker)).toBe(true);
    expect(["m04", marker.id, "m09"].sort()).toEqual(["m04", marker.id, "m09"]);
  });

  it("is null when nothing in the range may fold (only the triggering turn)", () => {
    expect(rangeMarker([msg(1, "ASSISTANT"), msg(5, "USER")], range(5, 6), 0, "p1")).toBeNull();
  });
});

describe("inWindow", () => {
  it("includes both ends", () => {
    expect([1, 2, 3, 4].map((s) => inWindow(msg(s, "USER"), range(2, 3)))).toEqual([false, true, true, false]);
  });
});
