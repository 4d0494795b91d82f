/**
 * The DynamoDB inputs of the store, asserted whole without sending them: which key, which update,
 * which guard, which placeholders. What they do against the engine is in test/integration/store*.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { backoff } from "../../core/adapters/backoff.js";
import {
  acquireLeaseParams,
  commitCompactionParts,
  discardFoldParams,
  releaseLeaseParams,
  revertCompactionParts,
  rollForwardParts,
  storeFoldParts,
  extendFoldParts,
} from "../../core/adapters/dynamodb/compaction-params.js";
import { parseRollForwardMarker, rollForwardMarker } from "../../core/adapters/dynamodb/roll-forward-marker.js";
import { failedParts, guarded, itemIsNew, leaseFree, statusIs, versionIs, when } from "../../core/adapters/dynamodb/conditions.js";
import { answerInboxItemParams, claimRangeJobParams, listInboxParams } from "../../core/adapters/dynamodb/inbox-params.js";
import { MemoryItem, MessageItem, MetaItem, memoryToItem, messageToItem, toMemory, toMessage } from "../../core/adapters/dynamodb/items.js";
import { activeViewParams, appendMessageParts, archiveUpdate, clearUpdate, restoreUpdate, updateTagsParts } from "../../core/adapters/dynamodb/message-params.js";
import { transactionInput, TRANSACTION_LIMIT } from "../../core/adapters/dynamodb/transact.js";
import { addMetaMapParams, recordTurnParams } from "../../core/adapters/dynamodb/process-params.js";
import { addUsageParams, putBudgetParams, reserveTokensParams, usageExpiry } from "../../core/adapters/dynamodb/usage-params.js";
import { Memory, Message, Process } from "../../core/domain/model.js";
import { makeMemory, makeMessage } from "../support/fixtures.js";
import { importBatches, IMPORT_TRANSACTION_BYTES } from "../../core/adapters/dynamodb/import-store.js";

const key = { tenantId: "acme", processId: "p-1" };
const pk = "T#acme#P#p-1";
const meta = { pk, sk: "META" };
const at = "2026-01-01T00:00:00.000Z";

describe("condition fragments", () => {
  it("join into one guard with the placeholders each fragment brings", () => {
    expect(when(versionIs(3), leaseFree(at))).toEqual({
      ConditionExpression: "version = :v AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)",
      ExpressionAttributeValues: { ":v": 3, ":now": at },
    });
    // No placeholders at all: the maps are left out (DynamoDB rejects an empty one).
    expect(when(itemIsNew())).toEqual({ ConditionExpression: "attribute_not_exists(sk)" });
  });

  it("refuse one placeholder bound to two values", () => {
    expect(() => guarded({}, { expression: "SET version = :v", values: { ":v": 9 } }, versionIs(3))).toThrow(/:v bound twice/);
    expect(guarded({}, { expression: "SET #status = :is", names: { "#status": "status" }, values: { ":is": "OK" } }, statusIs("OK"))).toEqual({
      UpdateExpression: "SET #status = :is",
      ConditionExpression: "#status = :is",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":is": "OK" },
    });
  });
});

describe("lease inputs", () => {
  it("grant a lease only for the version read, while no live lease exists", () => {
    expect(acquireLeaseParams("t", key, { owner: "w1", until: "U", now: "N", expectedVersion: 4 })).toEqual({
      TableName: "t",
      Key: meta,
      UpdateExpression: "SET leaseOwner = :o, leaseUntil = :u",
      ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing) AND version = :v AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)",
      ExpressionAttributeValues: { ":o": "w1", ":u": "U", ":v": 4, ":now": "N" },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    });
  });

  it("add the revert hold only for an automatic compaction", () => {
    const input = acquireLeaseParams("t", key, { owner: "w1", until: "U", now: "N", expectedVersion: 4, replayTokens: 900 });
    expect(input.ConditionExpression).toBe(
      "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing) AND version = :v AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now) AND (attribute_not_exists(#md.#hold) OR #md.#hold <= :rt)",
    );
    expect(input.ExpressionAttributeNames).toEqual({ "#md": "metadata", "#hold": "revertHoldTokens" });
    expect(input.ExpressionAttributeValues).toEqual({ ":o": "w1", ":u": "U", ":v": 4, ":now": "N", ":rt": 900 });
  });

  it("release only the caller's own lease", () => {
    expect(releaseLeaseParams("t", key, "w1")).toEqual({
      TableName: "t",
      Key: meta,
      UpdateExpression: "REMOVE leaseOwner, leaseUntil",
      ConditionExpression: "leaseOwner = :o",
      ExpressionAttributeValues: { ":o": "w1" },
    });
  });
});

describe("message inputs", () => {
  it("append a USER message in named parts: process guard, message, idempotency record", () => {
    const m = makeMessage("p-1");
    const parts = appendMessageParts("t", key, m, "idem-1");
    expect(parts.map(([name]) => name)).toEqual(["process", "message", "idempotency"]);
    expect(transactionInput(parts)).toEqual({
      TransactItems: [
        {
          Update: {
            TableName: "t",
            Key: meta,
            UpdateExpression: "SET firstUserMessageId = if_not_exists(firstUserMessageId, :id)",
            ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing)",
            ExpressionAttributeValues: { ":id": m.id },
          },
        },
        { Put: { TableName: "t", Item: messageToItem(key, m), ConditionExpression: "attribute_not_exists(sk)" } },
        {
          Put: {
            TableName: "t",
            Item: { pk, sk: "IDEM#idem-1", type: "IDEM", messageId: m.id },
            ConditionExpression: "attribute_not_exists(sk)",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
      ],
    });
  });

  it("record a turn with its message, in META's map, which must be there", () => {
    const record = { at, window: { tokens: 4000, source: "request" as const }, summaryId: null, version: 0 };
    const user = appendMessageParts("t", key, makeMessage("p-1"), undefined, undefined, record)[0]![1];
    expect(user.Update).toMatchObject({
      UpdateExpression: "SET firstUserMessageId = if_not_exists(firstUserMessageId, :id), #md.#lt = :lt",
      ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing) AND attribute_exists(#md)",
      ExpressionAttributeNames: { "#md": "metadata", "#lt": "lastTurn" },
      ExpressionAttributeValues: { ":lt": record },
    });
    const tool = appendMessageParts("t", key, makeMessage("p-1", { role: "TOOL" }), undefined, undefined, record)[0]![1];
    expect(tool.Update.UpdateExpression).toBe("SET #md.#lt = :lt");
    expect(recordTurnParams("t", key, record)).toEqual({
      TableName: "t",
      Key: meta,
      UpdateExpression: "SET #md.#lt = :lt",
      ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing) AND attribute_exists(#md)",
      ExpressionAttributeNames: { "#md": "metadata", "#lt": "lastTurn" },
      ExpressionAttributeValues: { ":lt": record },
    });
    expect(addMetaMapParams("t", key)).toMatchObject({ UpdateExpression: "SET #md = if_not_exists(#md, :map)", ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing)" });
  });

  it("only checks that the process exists for any other role, without an idempotency key", () => {
    const parts = appendMessageParts("t", key, makeMessage("p-1", { role: "ASSISTANT" }));
    expect(parts.map(([name]) => name)).toEqual(["process", "message"]);
    expect(parts[0]![1]).toEqual({ ConditionCheck: { TableName: "t", Key: meta, ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing)" } });
  });

  it("change tags only on an active message with the expected tags, and bump META's version", () => {
    const parts = updateTagsParts("t", key, "msg_1", { tags: ["pinned"], expectedTags: [] });
    expect(parts).toEqual([
      [
        "message",
        {
          Update: {
            TableName: "t",
            Key: { pk, sk: "M#msg_1" },
            UpdateExpression: "SET tags = :t",
            ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(archivedInMemoryId) AND tags = :old",
            ExpressionAttributeValues: { ":t": ["pinned"], ":old": [] },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
      ],
      [
        "process",
        {
          Update: {
            TableName: "t",
            Key: meta,
            UpdateExpression: "SET version = version + :one",
            ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing) AND attribute_not_exists(pendingArchive)",
            ExpressionAttributeValues: { ":one": 1 },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
      ],
    ]);
  });

  it("read the replay from the sparse index only, strongly consistent", () => {
    expect(activeViewParams("t", key)).toEqual({
      TableName: "t",
      IndexName: "lsi1",
      KeyConditionExpression: "pk = :pk AND begins_with(lsi1sk, :a)",
      ExpressionAttributeValues: { ":pk": pk, ":a": "A#" },
      Select: "ALL_PROJECTED_ATTRIBUTES",
      ConsistentRead: true,
    });
  });

  it("clear a result only while it is active, not cleared, and its tags are the ones the round read", () => {
    const cleared = { at, toolName: "read_file", chars: 4000, tokens: 1004 };
    expect(clearUpdate("t", key, { id: "msg_1", cleared, tokens: 40, expectedTags: ["x"] })).toEqual({
      TableName: "t",
      Key: { pk, sk: "M#msg_1" },
      UpdateExpression: "SET cleared = :c, tokens = :t",
      ConditionExpression: "attribute_exists(lsi1sk) AND attribute_not_exists(cleared) AND tags = :old",
      ExpressionAttributeValues: { ":c": cleared, ":t": 40, ":old": ["x"] },
    });
  });
});

describe("fold and commit inputs", () => {
  it("store a fold new, or over a fold still QUEUED", () => {
    const fold = makeMemory("p-1", { status: "QUEUED" });
    const live = ["process", { ConditionCheck: { TableName: "t", Key: { pk, sk: "META" }, ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing)" } }];
    expect(storeFoldParts("t", key, fold, "new")).toEqual([
      live,
      ["memory", { Put: { TableName: "t", Item: memoryToItem(key, fold), ConditionExpression: "attribute_not_exists(sk)" } }],
    ]);
    expect(storeFoldParts("t", key, fold, "QUEUED")).toEqual([
      live,
      [
        "memory",
        {
          Put: {
            TableName: "t",
            Item: memoryToItem(key, fold),
            ConditionExpression: "#status = :is",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":is": "QUEUED" },
          },
        },
      ],
    ]);
  });

  it("extend a fold in place only while PREPARED, not extended yet, and META at the version read with the extender's lease", () => {
    const fold = makeMemory("p-1", { status: "PREPARED" });
    expect(extendFoldParts("t", key, fold, { owner: "w1", version: 4 })).toEqual([
      [
        "process",
        {
          ConditionCheck: {
            TableName: "t",
            Key: { pk, sk: "META" },
            ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importing) AND version = :v AND leaseOwner = :o",
            ExpressionAttributeValues: { ":v": 4, ":o": "w1" },
          },
        },
      ],
      [
        "memory",
        {
          Put: {
            TableName: "t",
            Item: memoryToItem(key, fold),
            ConditionExpression: "#status = :is AND attribute_not_exists(metadata.#extended)",
            ExpressionAttributeNames: { "#status": "status", "#extended": "extended" },
            ExpressionAttributeValues: { ":is": "PREPARED" },
          },
        },
      ],
    ]);
  });

  it("discard a fold only in the status its discarder read", () => {
    expect(discardFoldParams("t", key, "mem_1", "QUEUED", "stale", at)).toEqual({
      TableName: "t",
      Key: { pk, sk: "S#mem_1" },
      UpdateExpression: "SET #status = :d, metadata.discardReason = :r, metadata.discardedAt = :at REMOVE lsi1sk, #ttl",
      ConditionExpression: "#status = :is",
      ExpressionAttributeNames: { "#ttl": "expiresAtEpoch", "#status": "status" },
      ExpressionAttributeValues: { ":d": "DISCARDED", ":r": "stale", ":at": at, ":is": "QUEUED" },
    });
  });

  const lastTurn = {
    at,
    window: { tokens: 128_000, source: "model" as const, model: "gpt-4o" },
    summaryId: "mem_0",
    version: 7,
    replay: { epoch: 4, format: "anthropic", head: "ab", recall: "", cleared: 0, open: [] },
  };

  it("commit in one transaction what fits, and mark the rest pending on META", () => {
    const memory = makeMemory("p-1");
    const archiveIds = Array.from({ length: 120 }, (_, i) => `msg_${String(i).padStart(3, "0")}`);
    const { parts, pendingArchive } = commitCompactionParts("t", key, {
      leaseOwner: "w1",
      expectedVersion: 7,
      replayEpoch: 4,
      lastTurn,
      memory,
      priorSummaryId: "mem_0",
      archiveIds,
      at,
    });
    expect(pendingArchive).toBe(true);
    expect(parts).toHaveLength(TRANSACTION_LIMIT);
    expect(parts.slice(0, 3).map(([name]) => name)).toEqual(["memory", "prior", "process"]);
    expect(parts.slice(3).every(([name]) => name === "archive")).toBe(true);
    expect(parts[2]![1]).toEqual({
      Update: {
        TableName: "t",
        Key: meta,
        UpdateExpression:
          "SET version = version + :one, activeSummaryId = :mid, #md = :md, pendingArchive = :pa, pendingArchiveFrom = :from REMOVE leaseOwner, leaseUntil",
        ConditionExpression: "leaseOwner = :o AND version = :v AND attribute_not_exists(pendingArchive) AND attribute_not_exists(deletedAt)",
        ExpressionAttributeNames: { "#md": "metadata" },
        // The map written whole: the revert hold gone, the replay epoch moved on, the last turn's record kept.
        ExpressionAttributeValues: {
          ":one": 1,
          ":mid": memory.id,
          ":md": { replayEpoch: 5, replayReason: "fold", lastTurn },
          ":pa": `archive:${memory.id}`,
          ":from": 97,
          ":o": "w1",
          ":v": 7,
        },
      },
    });
  });

  it("write META's map whole on a commit: a revert hold ends, the replay epoch moves on, the last turn's record stays", () => {
    const memory = makeMemory("p-1");
    const base = { leaseOwner: "w1", expectedVersion: 7, replayEpoch: 2, memory, priorSummaryId: null, archiveIds: ["msg_1"], at };
    const process = (withTurn: boolean) =>
      commitCompactionParts("t", key, { ...base, ...(withTurn ? { lastTurn } : {}) }).parts.find(([n]) => n === "process")![1].Update;
    expect(process(false).UpdateExpression).toBe("SET version = version + :one, activeSummaryId = :mid, #md = :md REMOVE leaseOwner, leaseUntil");
    expect(process(false).ExpressionAttributeValues[":md"]).toEqual({ replayEpoch: 3, replayReason: "fold" });
    expect(process(true).ExpressionAttributeValues[":md"]).toEqual({ replayEpoch: 3, replayReason: "fold", lastTurn });
  });

  it("commit a prepared fold in place only while it is still PREPARED", () => {
    const memory = makeMemory("p-1");
    const { parts, pendingArchive } = commitCompactionParts("t", key, {
      leaseOwner: "w1",
      expectedVersion: 7,
      replayEpoch: 0,
      memory,
      priorSummaryId: null,
      archiveIds: ["msg_1"],
      fromFold: "PREPARED",
      at,
    });
    expect(pendingArchive).toBe(false);
    expect(parts.map(([name]) => name)).toEqual(["memory", "process", "archive"]);
    expect(parts[0]![1]).toEqual({
      Put: {
        TableName: "t",
        Item: memoryToItem(key, memory),
        ConditionExpression: "#status = :is",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":is": "PREPARED" },
      },
    });
  });

  it("revert only the newest OK memory, re-activate its prior summary and record the hold", () => {
    const { parts, pendingArchive } = revertCompactionParts("t", key, {
      leaseOwner: "w1",
      expectedVersion: 8,
      replayEpoch: 0,
      memoryId: "mem_2",
      priorSummaryId: "mem_1",
      restoreIds: ["msg_1"],
      holdTokens: 1234,
      at,
    });
    expect(pendingArchive).toBe(false);
    expect(parts.map(([name]) => name)).toEqual(["memory", "prior", "process", "archive"]);
    expect(parts[0]![1]).toEqual({
      Update: {
        TableName: "t",
        Key: { pk, sk: "S#mem_2" },
        UpdateExpression: "SET #status = :reverted, #md.revertedAt = :at REMOVE lsi1sk",
        ConditionExpression: "#status = :is AND attribute_not_exists(supersededAt)",
        ExpressionAttributeNames: { "#status": "status", "#md": "metadata" },
        ExpressionAttributeValues: { ":reverted": "REVERTED", ":at": at, ":is": "OK" },
      },
    });
    expect(parts[2]![1]).toEqual({
      Update: {
        TableName: "t",
        Key: meta,
        UpdateExpression: "SET version = version + :one, #md = :hold, activeSummaryId = :prior REMOVE leaseOwner, leaseUntil",
        ConditionExpression: "leaseOwner = :o AND version = :v AND attribute_not_exists(pendingArchive) AND attribute_not_exists(deletedAt)",
        ExpressionAttributeNames: { "#md": "metadata" },
        ExpressionAttributeValues: { ":one": 1, ":hold": { revertHoldTokens: 1234, replayEpoch: 1, replayReason: "revert" }, ":prior": "mem_1", ":o": "w1", ":v": 8 },
      },
    });
  });
});

describe("roll-forward inputs", () => {
  const step = { marker: "archive:mem_2", memoryId: "mem_2", direction: "archive" as const, from: 97, next: 195, last: false, at };

  it("archive one step only while META's marker is at that step and the memory is OK", () => {
    const parts = rollForwardParts("t", key, { ...step, ids: ["msg_1", "msg_2"] });
    expect(parts.map(([name]) => name)).toEqual(["process", "memory", "message:msg_1", "message:msg_2"]);
    expect(parts[0]![1]).toEqual({
      Update: {
        TableName: "t",
        Key: meta,
        UpdateExpression: "SET pendingArchiveFrom = :next",
        ConditionExpression: "pendingArchive = :pm AND pendingArchiveFrom = :pfrom AND attribute_not_exists(deletedAt)",
        ExpressionAttributeValues: { ":next": 195, ":pm": "archive:mem_2", ":pfrom": 97 },
      },
    });
    expect(parts[1]![1]).toEqual({
      ConditionCheck: {
        TableName: "t",
        Key: { pk, sk: "S#mem_2" },
        ConditionExpression: "#status = :is",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":is": "OK" },
      },
    });
    expect(parts[2]![1]).toEqual({ Update: archiveUpdate("t", key, "msg_1", "mem_2", at) });
  });

  it("restore the last step only while the memory is REVERTED, and clear the marker with it", () => {
    const parts = rollForwardParts("t", key, { ...step, marker: "restore:mem_2", direction: "restore", last: true, ids: ["msg_1"] });
    expect(parts[0]![1]).toMatchObject({
      Update: { UpdateExpression: "REMOVE pendingArchive, pendingArchiveFrom", ExpressionAttributeValues: { ":pm": "restore:mem_2", ":pfrom": 97 } },
    });
    expect(parts[1]![1]).toMatchObject({ ConditionCheck: { ExpressionAttributeValues: { ":is": "REVERTED" } } });
    expect(parts[2]![1]).toEqual({ Update: restoreUpdate("t", key, "msg_1", "mem_2") });
  });

  it("name the memory and the direction in the marker, and read a bare memory id as a marker of no direction", () => {
    expect(parseRollForwardMarker(rollForwardMarker("restore", "mem_2"))).toEqual({ memoryId: "mem_2", direction: "restore" });
    expect(parseRollForwardMarker("mem_2")).toEqual({ memoryId: "mem_2", direction: null });
  });
});

describe("retention inputs (docs/configuration.md, \"Retention\")", () => {
  // 2026-01-01T00:00:00Z plus 30 days, in epoch seconds.
  const expires = 1767225600 + 30 * 86_400;
  const kept = makeMemory("p-1", { createdAt: at, metadata: { compactedMessages: 2, provider: "t", model: "t", retentionDays: 30 } });

  it("set the TTL attribute in the archive's own update, and only when the fold has a retention", () => {
    expect(archiveUpdate("t", key, "msg_1", "mem_2", at, expires)).toEqual({
      TableName: "t",
      Key: { pk, sk: "M#msg_1" },
      UpdateExpression: "SET archivedInMemoryId = :m, archivedAt = :at, #ttl = :exp REMOVE lsi1sk",
      ConditionExpression: "attribute_exists(sk) AND attribute_not_exists(archivedInMemoryId)",
      ExpressionAttributeNames: { "#ttl": "expiresAtEpoch" },
      ExpressionAttributeValues: { ":m": "mem_2", ":at": at, ":exp": expires },
    });
    const plain = archiveUpdate("t", key, "msg_1", "mem_2", at);
    expect(plain.UpdateExpression).toBe("SET archivedInMemoryId = :m, archivedAt = :at REMOVE lsi1sk");
    expect(plain.ExpressionAttributeNames).toBeUndefined();
  });

  it("remove the TTL attribute in every restore", () => {
    expect(restoreUpdate("t", key, "msg_1", "mem_2")).toMatchObject({
      UpdateExpression: "SET lsi1sk = :a REMOVE archivedInMemoryId, archivedAt, #ttl",
      ExpressionAttributeNames: { "#ttl": "expiresAtEpoch" },
    });
  });

  it("give every archive of a commit, and of each roll-forward step, the memory's expiry; the memory itself none", () => {
    const { parts } = commitCompactionParts("t", key, { leaseOwner: "w1", expectedVersion: 1, replayEpoch: 0, memory: kept, priorSummaryId: null, archiveIds: ["msg_1", "msg_2"], at });
    const archives = parts.filter(([name]) => name === "archive").map(([, w]) => w.Update.ExpressionAttributeValues[":exp"]);
    expect(archives).toEqual([expires, expires]);
    expect(parts[0]![1].Put.Item.expiresAtEpoch).toBeUndefined();
    const step = { marker: `archive:${kept.id}`, memoryId: kept.id, direction: "archive" as const, from: 2, ids: ["msg_3"], next: 3, last: true, at, expiresAtEpoch: expires };
    expect(rollForwardParts("t", key, step)[2]![1]).toEqual({ Update: archiveUpdate("t", key, "msg_3", kept.id, at, expires) });
  });
});

describe("inbox inputs", () => {
  it("answer only an OPEN item, keeping the stored copy of its status in step", () => {
    expect(answerInboxItemParams("t", "acme", "inb_1", "ACCEPTED", at)).toEqual({
      TableName: "t",
      Key: { pk: "T#acme#I#inb_1", sk: "INBOX" },
      UpdateExpression: "SET #status = :s, #item.#status = :s, #item.answeredAt = :at",
      ConditionExpression: "attribute_exists(pk) AND #status = :is",
      ExpressionAttributeNames: { "#status": "status", "#item": "item" },
      ExpressionAttributeValues: { ":s": "ACCEPTED", ":at": at, ":is": "OPEN" },
      ReturnValues: "ALL_NEW",
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    });
  });

  it("record an accepted offer's range job once, seeing the first on a second claim", () => {
    expect(claimRangeJobParams("t", "acme", "inb_1", "mem_1")).toEqual({
      TableName: "t",
      Key: { pk: "T#acme#I#inb_1", sk: "INBOX" },
      UpdateExpression: "SET #item.rangeJobId = :j",
      ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(#item.rangeJobId)",
      ExpressionAttributeNames: { "#item": "item" },
      ExpressionAttributeValues: { ":j": "mem_1" },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    });
  });

  it("list one process's items of one status on gsi2, newest first", () => {
    expect(listInboxParams("t", "acme", { processId: "p-1", status: "OPEN" })).toEqual({
      TableName: "t",
      IndexName: "gsi2",
      KeyConditionExpression: "#pk = :pk",
      ExpressionAttributeNames: { "#pk": "gsi2pk", "#status": "status" },
      ExpressionAttributeValues: { ":pk": "T#acme#P#p-1#INBOX", ":status": "OPEN" },
      FilterExpression: "#status = :status",
      ScanIndexForward: false,
    });
  });
});

describe("usage and budget inputs", () => {
  it("reserves tokens with one conditional ADD on the tenant's day item: the count before the ADD at most the budget minus the reservation", () => {
    expect(reserveTokensParams("t", "acme", "2026-03-01", 6000, 20_000)).toEqual({
      TableName: "t",
      Key: { pk: "T#acme#USAGE", sk: "D#2026-03-01" },
      UpdateExpression: "SET #type = :type, tenantId = :tenant, #day = :day, #ttl = :ttl ADD #tokens :tokens",
      ConditionExpression: "attribute_not_exists(#tokens) OR #tokens <= :room",
      ExpressionAttributeNames: { "#ttl": "expiresAtEpoch", "#tokens": "tokens", "#type": "type", "#day": "day" },
      ExpressionAttributeValues: { ":type": "USAGE", ":tenant": "acme", ":day": "2026-03-01", ":ttl": usageExpiry("2026-03-01"), ":tokens": 6000, ":room": 14_000 },
    });
  });

  it("adds the counters that changed, unconditionally (a negative token count returns an unused reservation)", () => {
    const params = addUsageParams("t", "acme", "2026-03-01", { tokens: -5985, calls: 1, inputTokens: 10, outputTokens: 5 });
    expect(params.UpdateExpression).toBe(
      "SET #type = :type, tenantId = :tenant, #day = :day, #ttl = :ttl ADD #tokens :tokens, #calls :calls, #inputTokens :inputTokens, #outputTokens :outputTokens",
    );
    expect(params.ConditionExpression).toBeUndefined();
    expect(params.ExpressionAttributeValues).toMatchObject({ ":tokens": -5985, ":calls": 1 });
    expect(addUsageParams("t", "acme", "2026-03-01", { tokens: 0 }).UpdateExpression).not.toContain("ADD");
  });

  it("keeps a day's usage 90 days after the day ends", () => {
    expect(usageExpiry("2026-03-01")).toBe(Date.parse("2026-03-02T00:00:00Z") / 1000 + 90 * 86_400);
  });

  it("puts the operator's budget in the tenant's usage partition, and no budget as an item without one (never a delete)", () => {
    expect(putBudgetParams("t", "acme", 2_000_000, "2026-03-01T00:00:00.000Z").Item).toEqual({
      pk: "T#acme#USAGE",
      sk: "BUDGET",
      type: "BUDGET",
      tenantId: "acme",
      dailyTokens: 2_000_000,
      updatedAt: "2026-03-01T00:00:00.000Z",
    });
    expect(putBudgetParams("t", "acme", null, "2026-03-01T00:00:00.000Z").Item).not.toHaveProperty("dailyTokens");
  });
});

describe("transaction cancellations", () => {
  const cancelled = (reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
    new TransactionCanceledException({
      message: "Transaction cancelled",
      $metadata: {},
      CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item ? { Item: marshall(r.Item) } : {}) })),
    });

  it("are read by part name, whatever position the part has", () => {
    const parts = appendMessageParts("t", key, makeMessage("p-1", { role: "ASSISTANT" }), "idem-1");
    const failed = failedParts(
      cancelled([{ Code: "None" }, { Code: "None" }, { Code: "ConditionalCheckFailed", Item: { pk, sk: "IDEM#idem-1", messageId: "msg_0" } }]),
      parts,
    );
    expect(failed).toEqual({ idempotency: { item: { pk, sk: "IDEM#idem-1", messageId: "msg_0" } } });
    expect(failedParts(cancelled([{ Code: "ConditionalCheckFailed" }, { Code: "None" }]), parts)).toEqual({ process: { item: null } });
    expect(failedParts(new Error("other"), parts)).toBeNull();
  });
});

describe("backoff", () => {
  it("waits the jittered, doubling, capped delay of each retry", async () => {
    const waits: number[] = [];
    const pause = backoff({ baseMs: 20, capMs: 50 }, { sleep: async (ms) => void waits.push(ms), random: () => 1 });
    for (const retry of [1, 2, 3, 4]) await pause(retry);
    expect(waits).toEqual([20, 40, 50, 50]);
  });
});

describe("item schemas", () => {
  it("take every field the domain declares from the domain schema, restating only what is stored differently", () => {
    const shared = (item: { shape: Record<string, unknown> }, domain: { shape: Record<string, unknown> }, stored: string[]) => {
      for (const field of Object.keys(domain.shape).filter((f) => !stored.includes(f))) {
        expect(item.shape[field], field).toBe(domain.shape[field]);
      }
    };
    shared(MetaItem, Process, ["conversation"]);
    shared(MessageItem, Message, ["archivedInMemoryId", "missingResult", "expiresAt", "native"]);
    // Native content is stored as its JSON text (with its large parts as blobs), never as a map.
    expect(MessageItem.shape.native.safeParse("[]").success).toBe(true);
    shared(MemoryItem, Memory, ["supersededAt", "native", "nativeBlob"]);
    // A provider fold's block too, as its JSON text; the blob of a large one is named in that text, never in an attribute of its own.
    expect(MemoryItem.shape.native.safeParse("{}").success).toBe(true);
    expect(Object.keys(MemoryItem.shape)).not.toContain("nativeBlob");
    expect(Object.keys(MessageItem.shape)).not.toContain("missingResult");
    // The expiry is stored as the table's TTL attribute (epoch seconds), never as the wire's ISO text.
    expect(Object.keys(MessageItem.shape)).not.toContain("expiresAt");
    expect(Object.keys(MessageItem.shape)).toContain("expiresAtEpoch");
  });

  it("round-trip a message and a memory through their stored shapes", () => {
    const archived = makeMessage("p-1", { archivedInMemoryId: "mem_1", toolCallId: "call_1" });
    expect(toMessage(MessageItem.parse(messageToItem(key, archived)))).toEqual(archived);
    const active = makeMessage("p-1");
    const stored = messageToItem(key, active);
    expect(stored).toMatchObject({ pk, sk: `M#${active.id}`, lsi1sk: `A#M#${active.id}`, type: "MSG" });
    expect(toMessage(stored)).toEqual(active);
    const memory = makeMemory("p-1", { supersededAt: at, supersededByMemoryId: "mem_2", citations: [["msg_1"]] });
    expect(toMemory(memoryToItem(key, memory))).toEqual(memory);
    const folded = makeMemory("p-1", { native: { format: "anthropic", content: [{ type: "compaction", content: "x", signature: "s", encrypted_content: "e\u0000" }] } });
    expect(toMemory(MemoryItem.parse(memoryToItem(key, folded)))).toEqual(folded);
    const large = makeMemory("p-1", { nativeBlob: { format: "openai-responses", sha256: "9f".repeat(32), bytes: 70_000 } });
    const item = memoryToItem(key, large);
    expect(JSON.parse(item.native!)).toMatchObject({ content: [], blobs: [{ path: [], sha256: "9f".repeat(32), bytes: 70_000 }] });
    expect(toMemory(MemoryItem.parse(item))).toEqual(large);
  });
});

describe("conditions are stated through the named fragments", () => {
  const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../core/adapters/dynamodb");
  it("no write outside conditions.ts spells a ConditionExpression by hand (docs/compaction.md, The commit protocol)", () => {
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && f !== "conditions.ts")
      .flatMap((f) =>
        readFileSync(path.join(dir, f), "utf8")
          .split("\n")
          .flatMap((line, i) => (/(?<!Key)ConditionExpression\b/.test(line) ? [`${f}:${i + 1}`] : [])),
      );
    expect(offenders).toEqual([]);
  });
});

describe("import transactions", () => {
  const sizes = (batches: number[][]) => batches.map((b) => b.length);
  it("hold at most the given count of items and IMPORT_TRANSACTION_BYTES of them; a larger item goes alone", () => {
    const half = IMPORT_TRANSACTION_BYTES / 2;
    expect(sizes(importBatches([half, half, half], (n) => n, 99))).toEqual([2, 1]);
    expect(sizes(importBatches([half, half + 1, half - 1], (n) => n, 99))).toEqual([1, 2]);
    expect(sizes(importBatches([IMPORT_TRANSACTION_BYTES + 1, 1], (n) => n, 99))).toEqual([1, 1]);
    expect(sizes(importBatches(Array(199).fill(1), (n) => n, 99))).toEqual([99, 99, 1]);
  });
});
