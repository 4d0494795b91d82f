import { describe, expect, it } from "vitest";
import type { CompactionModeName, Message, Role, ToolCall } from "../../core/domain/model.js";
import {
  MIN_CHUNK_CHARS,
  SUMMARY_SOURCE_FRAMING_CHARS,
  chunkBySourceChars,
  foldOldestUntil,
  selectForCompaction,
  sourceChars,
  truncateForSummary,
} from "../../core/domain/selector.js";
import { toolGroups } from "../../core/domain/tool-groups.js";
import { DEFAULT_TUNABLES, mergeTunables } from "../../core/domain/tunables.js";

let seq = 0;
function msg(
  role: Role,
  content: string,
  extra: { tags?: string[]; toolCalls?: ToolCall[]; toolCallId?: string; id?: string } = {},
): Message {
  const id = extra.id ?? `m${seq++}`;
  return {
    id,
    processId: "p1",
    role,
    content,
    tags: extra.tags ?? [],
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
    archivedInMemoryId: null,
    tokens: 1,
    ...(extra.toolCalls ? { toolCalls: extra.toolCalls } : {}),
    ...(extra.toolCallId ? { toolCallId: extra.toolCallId } : {}),
  };
}
const call = (id: string, name = "grep", args = '{"q":"x"}'): ToolCall => ({ id, name, arguments: args });
const pinnedFiller = (n: number) =>
  Array.from({ length: n }, (_, i) => msg("ASSISTANT", `pinned filler ${i}`, { tags: ["STRENGTH:pinned"] }));
const ids = (ms: readonly Message[]) => ms.map((m) => m.id);
const SUBSTANTIVE = "The deploy failed because the IAM role lacks dynamodb:PutItem on the table.";

describe("selectForCompaction: the strength table", () => {
  // Target first, then 10 pinned fillers and a USER turn: 12 > keepRecent, the target sits outside
  // every anchor and before the trigger turn, and the fillers never fold.
  const scenario = (target: Message) => [target, ...pinnedFiller(10), msg("USER", "next question?")];

  const rows: { label: string; tags: string[]; content: string; SOFT: boolean; HARD: boolean; EMERGENCY: boolean }[] = [
    { label: "STRENGTH:pinned (trivial content)", tags: ["STRENGTH:pinned"], content: "ok", SOFT: false, HARD: false, EMERGENCY: false },
    { label: "STRENGTH:pinned", tags: ["STRENGTH:pinned"], content: SUBSTANTIVE, SOFT: false, HARD: false, EMERGENCY: false },
    { label: "STRENGTH:strong", tags: ["STRENGTH:strong"], content: SUBSTANTIVE, SOFT: false, HARD: false, EMERGENCY: true },
    { label: "STRENGTH:strong (trivial content)", tags: ["STRENGTH:strong"], content: "thanks!", SOFT: false, HARD: false, EMERGENCY: true },
    { label: "STRENGTH:normal", tags: ["STRENGTH:normal"], content: SUBSTANTIVE, SOFT: false, HARD: true, EMERGENCY: true },
    { label: "STRENGTH:normal (trivial content)", tags: ["STRENGTH:normal"], content: "Let me check.", SOFT: false, HARD: true, EMERGENCY: true },
    { label: "STRENGTH:weak", tags: ["STRENGTH:weak"], content: "ok", SOFT: true, HARD: true, EMERGENCY: true },
    { label: "STRENGTH:weak (substantive content)", tags: ["STRENGTH:weak"], content: SUBSTANTIVE, SOFT: true, HARD: true, EMERGENCY: true },
    { label: "untagged trivial ack", tags: [], content: "Ok, thanks!", SOFT: true, HARD: true, EMERGENCY: true },
    { label: "untagged trivial self-narration", tags: [], content: "I'll look into it.", SOFT: true, HARD: true, EMERGENCY: true },
    { label: "untagged substantive", tags: [], content: SUBSTANTIVE, SOFT: false, HARD: true, EMERGENCY: true },
    { label: "untagged, starts like narration but has content", tags: [], content: "Let me check the logs: the error is X at line 42", SOFT: false, HARD: true, EMERGENCY: true },
  ];

  for (const mode of ["SOFT", "HARD", "EMERGENCY"] as const) {
    for (const row of rows) {
      it(`${row.label} ${row[mode] ? "folds" : "stays"} in ${mode}`, () => {
        const target = msg("ASSISTANT", row.content, { tags: row.tags });
        const selection = selectForCompaction(scenario(target), mode, DEFAULT_TUNABLES);
        expect(ids(selection.fold)).toEqual(row[mode] ? [target.id] : []);
        expect(selection.keep.includes(target)).toBe(!row[mode]);
        if (!row[mode]) expect(selection.reason).toBe("nothing_eligible");
      });
    }
  }

  it("treats SYSTEM messages by the same table: untagged substantive stays in SOFT, folds in HARD", () => {
    const system = msg("SYSTEM", "Use the staging account for every deploy in this session.");
    expect(selectForCompaction(scenario(system), "SOFT", DEFAULT_TUNABLES).fold).toEqual([]);
    expect(ids(selectForCompaction(scenario(system), "HARD", DEFAULT_TUNABLES).fold)).toEqual([system.id]);
  });

  it("keeps a pinned SYSTEM message even in EMERGENCY", () => {
    const system = msg("SYSTEM", "policy", { tags: ["STRENGTH:pinned"] });
    expect(selectForCompaction(scenario(system), "EMERGENCY", DEFAULT_TUNABLES).fold).toEqual([]);
  });

  it("lets the strongest of several strength tags decide (pinned beats weak)", () => {
    const target = msg("USER", "ok", { tags: ["STRENGTH:weak", "STRENGTH:pinned"] });
    expect(selectForCompaction(scenario(target), "EMERGENCY", DEFAULT_TUNABLES).fold).toEqual([]);
  });
});

describe("selectForCompaction: no-op reasons", () => {
  it("folds nothing in NONE, reason mode_none", () => {
    const messages = Array.from({ length: 30 }, () => msg("ASSISTANT", "ok"));
    const selection = selectForCompaction(messages, "NONE", DEFAULT_TUNABLES);
    expect(selection).toEqual({ fold: [], keep: messages, reason: "mode_none" });
  });

  it("folds nothing when nothing outside the protected tail is foldable, reason nothing_eligible", () => {
    const messages = Array.from({ length: 15 }, () => msg("ASSISTANT", SUBSTANTIVE));
    const selection = selectForCompaction(messages, "SOFT", DEFAULT_TUNABLES);
    expect(selection.fold).toEqual([]);
    expect(selection.keep).toEqual(messages);
    expect(selection.reason).toBe("nothing_eligible");
  });

  it("has no reason when it folds", () => {
    const messages = Array.from({ length: 15 }, () => msg("ASSISTANT", "ok"));
    expect(selectForCompaction(messages, "SOFT", DEFAULT_TUNABLES).reason).toBeUndefined();
  });
});

describe("selectForCompaction: keepRecent barrier", () => {
  const weak = (n: number) => Array.from({ length: n }, () => msg("ASSISTANT", "ok"));

  it("is a no-op at exactly keepRecent messages, even in EMERGENCY with a smaller anchor", () => {
    const messages = weak(DEFAULT_TUNABLES.keepRecent);
    const selection = selectForCompaction(messages, "EMERGENCY", DEFAULT_TUNABLES);
    expect(selection).toEqual({ fold: [], keep: messages, reason: "keep_recent" });
  });

  it("may fold at keepRecent + 1 messages: everything outside the anchor", () => {
    const messages = weak(DEFAULT_TUNABLES.keepRecent + 1);
    const selection = selectForCompaction(messages, "EMERGENCY", DEFAULT_TUNABLES);
    expect(ids(selection.fold)).toEqual(ids(messages.slice(0, messages.length - DEFAULT_TUNABLES.emergencyAnchor)));
  });

  it("follows an overridden keepRecent", () => {
    const tunables = mergeTunables(DEFAULT_TUNABLES, { keepRecent: 4 });
    expect(selectForCompaction(weak(4), "EMERGENCY", tunables).reason).toBe("keep_recent");
    expect(selectForCompaction(weak(5), "EMERGENCY", tunables).fold).toHaveLength(2);
  });
});

describe("selectForCompaction: anchor per mode", () => {
  const cases: [CompactionModeName, number][] = [
    ["SOFT", DEFAULT_TUNABLES.softAnchor],
    ["HARD", DEFAULT_TUNABLES.hardAnchor],
    ["EMERGENCY", DEFAULT_TUNABLES.emergencyAnchor],
  ];
  for (const [mode, anchor] of cases) {
    it(`keeps the last ${anchor} messages verbatim in ${mode}, even weak ones`, () => {
      const messages = Array.from({ length: 20 }, () => msg("ASSISTANT", "ok", { tags: ["STRENGTH:weak"] }));
      const selection = selectForCompaction(messages, mode, DEFAULT_TUNABLES);
      expect(ids(selection.fold)).toEqual(ids(messages.slice(0, 20 - anchor)));
      expect(ids(selection.keep)).toEqual(ids(messages.slice(20 - anchor)));
    });
  }

  it("uses an overridden anchor", () => {
    const tunables = mergeTunables(DEFAULT_TUNABLES, { hardAnchor: 1 });
    const messages = Array.from({ length: 12 }, () => msg("ASSISTANT", SUBSTANTIVE));
    expect(selectForCompaction(messages, "HARD", tunables).keep).toEqual([messages[11]]);
  });
});

describe("selectForCompaction: the triggering turn", () => {
  const noAnchor = mergeTunables(DEFAULT_TUNABLES, { softAnchor: 0, hardAnchor: 0, emergencyAnchor: 0, keepRecent: 0 });

  it("never folds the newest USER message, even a weak one in EMERGENCY", () => {
    const older = Array.from({ length: 5 }, () => msg("ASSISTANT", "ok"));
    const trigger = msg("USER", "ok", { tags: ["STRENGTH:weak"] });
    const selection = selectForCompaction([...older, trigger], "EMERGENCY", noAnchor);
    expect(ids(selection.fold)).toEqual(ids(older));
    expect(selection.keep).toEqual([trigger]);
  });

  it("never folds the ASSISTANT and TOOL messages after the newest USER message in SOFT", () => {
    const older = [msg("USER", "ok"), msg("ASSISTANT", "Let me check.")];
    const trigger = msg("USER", "thanks");
    const narration = msg("ASSISTANT", "Working on it...");
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("c1")], tags: ["STRENGTH:weak"] });
    const result = msg("TOOL", "ok", { toolCallId: "c1" });
    const tail = [trigger, narration, toolCall, result];
    const selection = selectForCompaction([...older, ...tail], "SOFT", noAnchor);
    expect(ids(selection.fold)).toEqual(ids(older));
    expect(ids(selection.keep)).toEqual(ids(tail));
  });

  it.each(["HARD", "EMERGENCY"] as const)("in %s folds the turn's tool groups older than the anchor, never its other messages", (mode) => {
    const older = [msg("USER", "ok"), msg("ASSISTANT", "Let me check.")];
    const trigger = msg("USER", "thanks");
    const narration = msg("ASSISTANT", "Working on it...");
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const result = msg("TOOL", SUBSTANTIVE, { toolCallId: "c1" });
    const selection = selectForCompaction([...older, trigger, narration, toolCall, result], mode, noAnchor);
    expect(ids(selection.fold)).toEqual(ids([...older, toolCall, result]));
    expect(ids(selection.keep)).toEqual(ids([trigger, narration]));
  });

  it("keeps the whole turn in every mode with foldCurrentTurn 0", () => {
    const older = [msg("USER", "ok"), msg("ASSISTANT", "Let me check.")];
    const tail = [msg("USER", "thanks"), msg("ASSISTANT", "", { toolCalls: [call("c1")] }), msg("TOOL", SUBSTANTIVE, { toolCallId: "c1" })];
    const selection = selectForCompaction([...older, ...tail], "EMERGENCY", { ...noAnchor, foldCurrentTurn: 0 });
    expect(ids(selection.fold)).toEqual(ids(older));
  });

  it("keeps a turn's tool group whose result is inside the anchor, and a strong one in HARD", () => {
    const trigger = msg("USER", "Refactor the parser.");
    const strongCall = msg("ASSISTANT", "", { toolCalls: [call("s1")], tags: ["STRENGTH:strong"] });
    const strongResult = msg("TOOL", SUBSTANTIVE, { toolCallId: "s1" });
    const oldCall = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const oldResult = msg("TOOL", SUBSTANTIVE, { toolCallId: "c1" });
    const lateCall = msg("ASSISTANT", "", { toolCalls: [call("c2")] });
    const lateResult = msg("TOOL", SUBSTANTIVE, { toolCallId: "c2" });
    const tunables = { ...noAnchor, hardAnchor: 1 };
    const selection = selectForCompaction([trigger, strongCall, strongResult, oldCall, oldResult, lateCall, lateResult], "HARD", tunables);
    expect(ids(selection.fold)).toEqual(ids([oldCall, oldResult]));
  });

  it("without any USER message, only the anchor protects the tail", () => {
    const messages = Array.from({ length: 4 }, () => msg("ASSISTANT", "ok"));
    expect(selectForCompaction(messages, "EMERGENCY", noAnchor).fold).toEqual(messages);
  });
});

describe("selectForCompaction: tool groups fold whole or not at all", () => {
  // No USER messages in these cases, so only the anchor and strengths protect.
  const noTrigger = { ...DEFAULT_TUNABLES, keepRecent: 0 };

  it("keeps a call/result pair whole when the result is inside the anchor", () => {
    // HARD anchor 5: the call is 6th from the end, its result 5th (inside the anchor).
    const early = msg("ASSISTANT", SUBSTANTIVE);
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const result = msg("TOOL", "ok", { toolCallId: "c1" });
    const tail = Array.from({ length: 4 }, () => msg("ASSISTANT", SUBSTANTIVE));
    const selection = selectForCompaction([early, toolCall, result, ...tail], "HARD", noTrigger);
    expect(ids(selection.fold)).toEqual([early.id]);
    expect(selection.keep).toContain(toolCall);
    expect(selection.keep).toContain(result);
  });

  it("keeps the assistant call when its TOOL result is pinned, even in EMERGENCY", () => {
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const result = msg("TOOL", "schema v2 applied", { toolCallId: "c1", tags: ["STRENGTH:pinned"] });
    const other = msg("ASSISTANT", SUBSTANTIVE);
    const messages = [toolCall, result, other, ...Array.from({ length: 3 }, () => msg("ASSISTANT", "x"))];
    const selection = selectForCompaction(messages, "EMERGENCY", noTrigger);
    expect(ids(selection.fold)).toEqual([other.id]);
    expect(selection.keep.slice(0, 2)).toEqual([toolCall, result]);
  });

  it("keeps all parallel calls and results when one result is strong in HARD, folds them in EMERGENCY", () => {
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("a"), call("b")] });
    const ra = msg("TOOL", "ok", { toolCallId: "a" });
    const rb = msg("TOOL", SUBSTANTIVE, { toolCallId: "b", tags: ["STRENGTH:strong"] });
    const messages = [toolCall, ra, rb, ...pinnedFiller(5)];
    expect(selectForCompaction(messages, "HARD", noTrigger).fold).toEqual([]);
    expect(selectForCompaction(messages, "EMERGENCY", noTrigger).fold).toEqual([toolCall, ra, rb]);
  });

  it("keeps a group whose call would stay in SOFT even though its result alone is trivial", () => {
    const toolCall = msg("ASSISTANT", "Let me check.", { toolCalls: [call("c1")] });
    const result = msg("TOOL", "ok", { toolCallId: "c1" });
    const ack = msg("ASSISTANT", "ok");
    const messages = [toolCall, result, ack, ...pinnedFiller(10)];
    expect(selectForCompaction(messages, "SOFT", noTrigger).fold).toEqual([ack]);
  });

  it("groups a call with its result across an interleaved message", () => {
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("c1")] });
    const between = msg("SYSTEM", "ok");
    const result = msg("TOOL", SUBSTANTIVE, { toolCallId: "c1", tags: ["STRENGTH:pinned"] });
    const messages = [toolCall, between, result, ...pinnedFiller(10)];
    const selection = selectForCompaction(messages, "EMERGENCY", noTrigger);
    expect(selection.fold).toEqual([between]);
  });

  it("folds a TOOL result whose call is not in the active set on its own", () => {
    const orphan = msg("TOOL", "ok", { toolCallId: "gone" });
    const messages = [orphan, ...pinnedFiller(10)];
    expect(selectForCompaction(messages, "SOFT", noTrigger).fold).toEqual([orphan]);
  });

  it("toolGroups maps each result to its call's index and a reused id to the nearest call", () => {
    const messages = [
      msg("ASSISTANT", "", { toolCalls: [call("x")] }),
      msg("TOOL", "r", { toolCallId: "x" }),
      msg("USER", "q"),
      msg("ASSISTANT", "", { toolCalls: [call("x")] }),
      msg("TOOL", "r", { toolCallId: "x" }),
      msg("TOOL", "r", { toolCallId: "nope" }),
    ];
    expect(toolGroups(messages).group).toEqual([0, 0, 2, 3, 3, 5]);
  });
});

describe("chunkBySourceChars", () => {
  const sized = (chars: number, role: Role = "ASSISTANT") =>
    msg(role, "x".repeat(chars - SUMMARY_SOURCE_FRAMING_CHARS));

  it("packs messages in order into chunks of at most the cap", () => {
    const messages = Array.from({ length: 7 }, () => sized(300));
    const chunks = chunkBySourceChars(messages, 1000);
    expect(chunks.map((c) => c.messages.length)).toEqual([3, 3, 1]);
    expect(chunks.flatMap((c) => c.messages)).toEqual(messages);
    expect(chunks.every((c) => c.chars <= 1000 && !c.truncated)).toBe(true);
    expect(chunks[0]!.chars).toBe(900);
  });

  it("moves a tool group to the next chunk instead of splitting it", () => {
    const a = sized(600);
    const toolCall = msg("ASSISTANT", "", { toolCalls: [call("c1", "grep", "y".repeat(200))] });
    const result = msg("TOOL", "z".repeat(100), { toolCallId: "c1" });
    // a + call fit 1000, a + call + result would not.
    expect(sourceChars(a) + sourceChars(toolCall)).toBeLessThanOrEqual(1000);
    const chunks = chunkBySourceChars([a, toolCall, result], 1000);
    expect(chunks.map((c) => c.messages)).toEqual([[a], [toolCall, result]]);
  });

  it("puts a single oversize message alone in its chunk, truncated to the cap with a marker", () => {
    const small = sized(200);
    const huge = msg("TOOL", `HEAD-${"q".repeat(50_000)}`);
    const after = sized(200);
    const chunks = chunkBySourceChars([small, huge, after], 2000);
    expect(chunks.map((c) => c.messages)).toEqual([[small], [huge], [after]]);
    const oversize = chunks[1]!;
    expect(oversize.truncated).toBe(true);
    expect(oversize.chars).toBeLessThanOrEqual(2000);
    expect(oversize.source[0]!.content.startsWith("HEAD-qqq")).toBe(true);
    expect(oversize.source[0]!.content).toMatch(/…\[truncated \d+ chars\]$/);
    expect(oversize.source[0]!.id).toBe(huge.id);
    expect(huge.content).toHaveLength(50_005); // the original is untouched
  });

  it("truncates only the large member of an oversize tool group and keeps the group in one chunk", () => {
    const toolCall = msg("ASSISTANT", "checking", { toolCalls: [call("c1", "read_file", '{"path":"a.log"}')] });
    const result = msg("TOOL", "L".repeat(10_000), { toolCallId: "c1" });
    const [chunk, ...rest] = chunkBySourceChars([toolCall, result], 1500);
    expect(rest).toEqual([]);
    expect(chunk!.messages).toEqual([toolCall, result]);
    expect(chunk!.source[0]).toBe(toolCall);
    expect(chunk!.source[1]!.content.length).toBeLessThan(1500);
    expect(chunk!.chars).toBeLessThanOrEqual(1500);
  });

  it("spreads a tool group over consecutive chunks only when its members cannot share one call", () => {
    const calls = Array.from({ length: 10 }, (_, i) => call(`c${i}`));
    const toolCall = msg("ASSISTANT", "", { toolCalls: calls });
    const results = calls.map((c) => msg("TOOL", "R".repeat(400), { toolCallId: c.id }));
    const chunks = chunkBySourceChars([toolCall, ...results], MIN_CHUNK_CHARS * 5);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flatMap((c) => c.messages)).toEqual([toolCall, ...results]);
    expect(chunks.every((c) => c.chars <= MIN_CHUNK_CHARS * 5)).toBe(true);
  });

  it("returns no chunks for an empty selection", () => {
    expect(chunkBySourceChars([], 1000)).toEqual([]);
  });

  it("rejects a cap below the minimum", () => {
    expect(() => chunkBySourceChars([sized(100)], MIN_CHUNK_CHARS - 1)).toThrow(/below the minimum/);
  });
});

describe("truncateForSummary", () => {
  it("returns the same message when it already fits", () => {
    const m = msg("USER", "short");
    expect(truncateForSummary(m, 1000)).toBe(m);
  });

  it("keeps the head of the content and reports how much was cut", () => {
    const m = msg("USER", "a".repeat(5000));
    const t = truncateForSummary(m, 1000);
    expect(sourceChars(t)).toBeLessThanOrEqual(1000);
    const match = /^(a+)…\[truncated (\d+) chars\]$/.exec(t.content);
    expect(match).not.toBeNull();
    expect(match![1]!.length + Number(match![2])).toBe(5000);
  });

  it("cuts the largest piece first: big tool arguments shrink, short content stays", () => {
    const m = msg("ASSISTANT", "Writing the file now.", {
      toolCalls: [call("c1", "write_file", "B".repeat(8000))],
    });
    const t = truncateForSummary(m, 1200);
    expect(t.content).toBe("Writing the file now.");
    expect(t.toolCalls![0]!.name).toBe("write_file");
    expect(t.toolCalls![0]!.arguments).toMatch(/^B+…\[truncated \d+ chars\]$/);
    expect(sourceChars(t)).toBeLessThanOrEqual(1200);
  });

  it("never splits a surrogate pair at the cut", () => {
    const m = msg("USER", "😀".repeat(2000));
    const t = truncateForSummary(m, 500);
    const kept = t.content.replace(/…\[truncated \d+ chars\]$/, "");
    expect(kept).toBe("😀".repeat(kept.length / 2));
  });

  it("falls back to a stub naming role and tool calls when the calls alone exceed the budget", () => {
    const calls = Array.from({ length: 20 }, (_, i) => call(`c${i}`, `tool_${i}_${"n".repeat(30)}`, "{}"));
    const m = msg("ASSISTANT", "x", { toolCalls: calls });
    const t = truncateForSummary(m, 300);
    expect(t.toolCalls).toBeUndefined();
    expect(t.content.startsWith("[ASSISTANT message of")).toBe(true);
    expect(sourceChars(t)).toBeLessThanOrEqual(300);
  });
});

describe("foldOldestUntil (the foldTarget tunable)", () => {
  const m = (id: string, tokens: number, extra: Partial<Message> = {}): Message => ({
    id,
    processId: "p",
    role: "USER",
    content: id,
    tags: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    archivedInMemoryId: null,
    tokens,
    ...extra,
  });

  it("takes the oldest messages until enough tokens are freed", () => {
    const fold = [m("a", 100), m("b", 100), m("c", 100), m("d", 100)];
    expect(foldOldestUntil(fold, 150).map((x) => x.id)).toEqual(["a", "b"]);
    expect(foldOldestUntil(fold, 200).map((x) => x.id)).toEqual(["a", "b"]);
  });

  it("folds the whole selection when even that frees too little, and at least one message", () => {
    const fold = [m("a", 10), m("b", 10)];
    expect(foldOldestUntil(fold, 1_000).map((x) => x.id)).toEqual(["a", "b"]);
    expect(foldOldestUntil(fold, -5).map((x) => x.id)).toEqual(["a"]);
    expect(foldOldestUntil([], 100)).toEqual([]);
  });

  it("never separates a tool call from its results", () => {
    const fold = [
      m("a", 100),
      m("call", 100, { role: "ASSISTANT", toolCalls: [{ id: "t1", name: "grep", arguments: "{}" }] }),
      m("result", 100, { role: "TOOL", toolCallId: "t1" }),
      m("d", 100),
    ];
    expect(foldOldestUntil(fold, 150).map((x) => x.id)).toEqual(["a", "call", "result"]);
  });

  it("takes a call's result even when another message sits between them", () => {
    const fold = [
      m("call", 100, { role: "ASSISTANT", toolCalls: [{ id: "c1", name: "grep", arguments: "{}" }] }),
      m("note", 100, { role: "SYSTEM" }),
      m("result", 100, { role: "TOOL", toolCallId: "c1" }),
      m("d", 100),
    ];
    expect(foldOldestUntil(fold, 50).map((x) => x.id)).toEqual(["call", "note", "result"]);
  });

  it("takes every result of parallel calls made in separate ASSISTANT messages, in whatever order they came", () => {
    const fold = [
      m("a1", 100, { role: "ASSISTANT", toolCalls: [{ id: "c1", name: "grep", arguments: "{}" }] }),
      m("a2", 100, { role: "ASSISTANT", toolCalls: [{ id: "c2", name: "read", arguments: "{}" }] }),
      m("t2", 100, { role: "TOOL", toolCallId: "c2" }),
      m("t1", 100, { role: "TOOL", toolCallId: "c1" }),
      m("e", 100),
    ];
    expect(foldOldestUntil(fold, 250).map((x) => x.id)).toEqual(["a1", "a2", "t2", "t1"]);
  });
});
