import { describe, expect, it } from "vitest";
import {
  activeMemoryKey,
  activeMessageKey,
  inboxPk,
  memorySk,
  messageSk,
  META_ACTIVE,
  processPk,
} from "../../core/adapters/dynamodb/keys.js";
import { supersedeUpdate } from "../../core/adapters/dynamodb/compaction-params.js";
import { archiveUpdate } from "../../core/adapters/dynamodb/message-params.js";
import { decodeCursor, encodeCursor } from "../../core/adapters/dynamodb/paging.js";

describe("key builders", () => {
  const key = { tenantId: "acme", processId: "p-1" };

  it("puts every item of a process in one partition", () => {
    expect(processPk(key)).toBe("T#acme#P#p-1");
    expect(messageSk("msg_01")).toBe("M#msg_01");
    expect(memorySk("mem_01")).toBe("S#mem_01");
  });

  it("orders META before active messages before the active summary on the sparse index", () => {
    const sorted = [activeMemoryKey("mem_1"), activeMessageKey("msg_1"), META_ACTIVE].sort();
    expect(sorted).toEqual([META_ACTIVE, activeMessageKey("msg_1"), activeMemoryKey("mem_1")]);
    for (const k of sorted) expect(k.startsWith("A#")).toBe(true);
  });

  it("separates tenants even for the same process id", () => {
    expect(processPk({ tenantId: "a", processId: "p" })).not.toBe(processPk({ tenantId: "b", processId: "p" }));
    expect(inboxPk("a", "inb_1")).not.toBe(inboxPk("b", "inb_1"));
  });

  it("builds an archive update that never re-points an archived message", () => {
    expect(archiveUpdate("t", key, "msg_1", "mem_9", "2026-01-01T00:00:00.000Z")).toStrictEqual({
      TableName: "t",
      Key: { pk: "T#acme#P#p-1", sk: "M#msg_1" },
      UpdateExpression: "SET archivedInMemoryId = :m, archivedAt = :at REMOVE lsi1sk",
      ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(archivedInMemoryId)",
      ExpressionAttributeValues: { ":m": "mem_9", ":at": "2026-01-01T00:00:00.000Z" },
    });
  });

  it("builds a supersede update that never supersedes twice", () => {
    expect(supersedeUpdate("t", key, "mem_1", "mem_2", "2026-01-01T00:00:00.000Z")).toStrictEqual({
      TableName: "t",
      Key: { pk: "T#acme#P#p-1", sk: "S#mem_1" },
      UpdateExpression: "SET supersededAt = :at, supersededByMemoryId = :n REMOVE lsi1sk",
      ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(supersededAt)",
      ExpressionAttributeValues: { ":at": "2026-01-01T00:00:00.000Z", ":n": "mem_2" },
    });
  });

  it("round-trips cursors and rejects one from another listing", () => {
    const listing = { attr: "pk", value: "T#acme#P#p-1", keys: ["pk", "sk"] };
    const c = encodeCursor({ pk: "T#acme#P#p-1", sk: "M#msg_5" });
    expect(decodeCursor(c, listing)).toEqual({ pk: "T#acme#P#p-1", sk: "M#msg_5" });
    expect(() => decodeCursor(c, { ...listing, value: "T#evil#P#p-1" })).toThrow(/cursor/);
    expect(() => decodeCursor("not-base64-json", listing)).toThrow(/cursor/);
  });

  it("rejects a start key DynamoDB would refuse: missing, extra, empty or overlong key parts", () => {
    const listing = { attr: "pk", value: "T#acme#P#p-1", keys: ["pk", "sk"] };
    const bad = [
      { pk: "T#acme#P#p-1" },
      { pk: "T#acme#P#p-1", sk: "M#1", lsi1sk: "A#0" },
      { pk: "T#acme#P#p-1", sk: "" },
      { pk: "T#acme#P#p-1", sk: "M#".padEnd(1025, "x") },
      { pk: "T#acme#P#p-1", sk: 5 },
      ["T#acme#P#p-1", "M#1"],
    ];
    for (const key of bad) expect(() => decodeCursor(encodeCursor(key as Record<string, unknown>), listing), JSON.stringify(key).slice(0, 60)).toThrow(/cursor/);
  });
});

describe("replay index projection", () => {
  it("carries every attribute of META, message and memory items except keys, sourceRefs, citations, droppedUnits, keepUnits and the ledger", async () => {
    const { MetaItem, MessageItem, MemoryItem } = await import("../../core/adapters/dynamodb/items.js");
    const { REPLAY_PROJECTION } = await import("../../core/adapters/dynamodb/table.js");
    const attributes = new Set([MetaItem, MessageItem, MemoryItem].flatMap((s) => Object.keys(s.shape)));
    for (const k of ["pk", "sk", "lsi1sk", "sourceRefs", "citations", "droppedUnits", "keepUnits", "ledger"]) attributes.delete(k);
    // A deleted process's META leaves the replay index with its tombstone (docs/api.md, "Deleting a process").
    for (const k of ["deletedAt", "deletion"]) attributes.delete(k);
    // Only an archived original carries the TTL attribute, and archiving takes it off the index.
    attributes.delete("expiresAtEpoch");
    // The engine's system and tools: only a provider fold reads them, with the process.
    attributes.delete("conversation");
    expect([...REPLAY_PROJECTION].sort()).toEqual([...attributes].sort());
  });
});
