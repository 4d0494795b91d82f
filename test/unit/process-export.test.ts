/**
 * The export format's pure parts (core/domain/process-export.ts): the order of the lines, the
 * checks before any write, and id remapping that rewrites every reference.
 */
import { describe, expect, it } from "vitest";
import { AppError } from "../../core/domain/errors.js";
import type { Memory, Message } from "../../core/domain/model.js";
import { NATIVE_BLOCK_MAX_BYTES } from "../../core/domain/native/memory-block.js";
import {
  endLine,
  exportLines,
  headerLine,
  memoryLine,
  messageLine,
  processLine,
  relocate,
  scanExport,
  type IdSource,
} from "../../core/domain/process-export.js";

const AT = "2026-01-01T00:00:00.000Z";
const msg = (id: string, archivedInMemoryId: string | null = null): Message => ({
  id, processId: "p-1", role: "USER", content: `text of ${id}`, tags: [], createdAt: AT, archivedInMemoryId, tokens: 3,
});
const mem = (id: string, over: Partial<Memory> = {}): Memory => ({
  id, processId: "p-1", kind: "ARCHIVED_CHAT", status: "OK", content: "summary", sourceRefs: [], tokens: 2, createdAt: AT, supersededAt: null,
  metadata: { compactedMessages: 1, provider: "fake", model: "m" }, ...over,
});
const file = (lines: string[]) => lines.join("");
const head = () => [headerLine("p-1", AT), processLine({ processId: "p-1", projectId: "x", allowsCrossProjectSpawn: false, createdAt: AT }, "mem_2")];

/** A whole text through the scanner: its outline, and its messages in order. */
function parseExport(text: string, ids?: IdSource) {
  const scanner = scanExport(ids);
  const messages: Message[] = [];
  for (const line of exportLines(text)) {
    const entry = scanner.line(line);
    if (entry.kind === "message") messages.push(entry.message);
  }
  return { ...scanner.finish(), messages };
}

const fault = (text: string) => {
  try {
    parseExport(text);
    return null;
  } catch (e) {
    return e instanceof AppError ? { code: e.code, line: e.details?.line } : e;
  }
};

describe("parseExport", () => {
  const whole = () => [
    ...head(),
    messageLine(msg("msg_1", "mem_1")),
    messageLine(msg("msg_2", "mem_2")),
    messageLine(msg("msg_3")),
    memoryLine(mem("mem_2", { sourceRefs: ["msg_2"], metadata: { compactedMessages: 1, provider: "f", model: "m", supersededMemoryId: "mem_1", markerMessageId: "msg_3" }, citations: [["msg_2"]] })),
    memoryLine(mem("mem_1", { sourceRefs: ["msg_1"], supersededAt: AT, supersededByMemoryId: "mem_2" })),
    endLine(3, 2),
  ];

  it("reads a whole file", () => {
    const e = parseExport(file(whole()));
    expect(e.messages.map((m) => m.id)).toEqual(["msg_1", "msg_2", "msg_3"]);
    expect(e.memories.map((m) => m.id)).toEqual(["mem_2", "mem_1"]);
    expect(e.activeSummaryId).toBe("mem_2");
  });

  it("refuses lines out of order, after the end, and memories the file does not hold", () => {
    const lines = whole();
    expect(fault(file([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)]))).toEqual({ code: "import.invalid_line", line: 2 });
    expect(fault(file([...lines, endLine(3, 2)]))).toEqual({ code: "import.invalid_line", line: 9 });
    expect(fault(file([...lines.slice(0, 6), endLine(3, 1)]))).toMatchObject({ code: "import.dangling_reference" });
  });
});

describe("a memory's provider block in an import", () => {
  /** A block whose JSON is exactly `bytes` long. */
  const block = (bytes: number) => {
    const shell = { format: "anthropic" as const, content: [{ type: "compaction", content: "" }] };
    const pad = bytes - JSON.stringify(shell).length;
    return { format: "anthropic" as const, content: [{ type: "compaction", content: "x".repeat(pad) }] };
  };
  const lines = (native: Memory["native"]) => file([...head(), messageLine(msg("msg_1", "mem_2")), memoryLine(mem("mem_2", { sourceRefs: ["msg_1"], native })), endLine(1, 1)]);

  it(`is read back whole at ${NATIVE_BLOCK_MAX_BYTES} bytes of JSON and refused one byte past it`, () => {
    const at = block(NATIVE_BLOCK_MAX_BYTES);
    expect(JSON.stringify(at).length).toBe(NATIVE_BLOCK_MAX_BYTES);
    expect(parseExport(lines(at)).memories[0]!.native?.content).toEqual(at.content);
    expect(fault(lines(block(NATIVE_BLOCK_MAX_BYTES + 1)))).toEqual({ code: "import.invalid_line", line: 4 });
  });

  it("is refused when the line names a blob instead of carrying the block", () => {
    const named = file([...head(), messageLine(msg("msg_1", "mem_2")), memoryLine(mem("mem_2", { sourceRefs: ["msg_1"], nativeBlob: { format: "anthropic", sha256: "9f".repeat(32), bytes: 70_000 } })), endLine(1, 1)]);
    expect(fault(named)).toEqual({ code: "import.invalid_line", line: 4 });
  });
});

describe("relocate", () => {
  it("gives new ids in order and rewrites every reference; tool call ids and content stay", () => {
    let n = 0;
    const e = parseExport(
      file([
        ...head(),
        messageLine({ ...msg("msg_1", "mem_2"), toolCallId: "call_1" }),
        messageLine(msg("msg_2")),
        memoryLine(mem("mem_2", { sourceRefs: ["msg_1"], citations: [["msg_1"]], droppedUnits: [{ text: "a", messageIds: ["msg_1"] }], metadata: { compactedMessages: 1, provider: "f", model: "m", supersededMemoryId: "mem_1", markerMessageId: "msg_2", loss: { units: 1, kept: 0, dropped: [{ text: "a", messageIds: ["msg_1"] }] } } })),
        memoryLine(mem("mem_1", { supersededAt: AT, supersededByMemoryId: "mem_2", content: "names msg_1" })),
        endLine(2, 2),
      ]),
      { message: () => `msg_new${++n}`, memory: () => `mem_new${++n}` },
    );
    const relocation = relocate(e, "p-2", AT);
    const moved = { ...relocation, messages: e.messages.map(relocation.message), memories: e.memories.map(relocation.memory) };
    expect(moved.process.processId).toBe("p-2");
    expect(moved.firstUserMessageId).toBe("msg_new1");
    expect(moved.messages).toMatchObject([
      { id: "msg_new1", processId: "p-2", archivedInMemoryId: "mem_new4", toolCallId: "call_1" },
      { id: "msg_new2", archivedInMemoryId: null },
    ]);
    // Memories get ids oldest first (mem_1 before mem_2), so they sort as before.
    expect(moved.memories[1]).toMatchObject({ id: "mem_new3", supersededByMemoryId: "mem_new4", content: "names msg_1" });
    expect(moved.memories[0]).toMatchObject({
      id: "mem_new4",
      sourceRefs: ["msg_new1"],
      citations: [["msg_new1"]],
      droppedUnits: [{ messageIds: ["msg_new1"] }],
      metadata: { supersededMemoryId: "mem_new3", markerMessageId: "msg_new2", loss: { dropped: [{ messageIds: ["msg_new1"] }] } },
    });
    expect(moved.activeSummaryId).toBe("mem_new4");
  });
});
