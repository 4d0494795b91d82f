/**
 * The sweep of blobs no live message names (docs/configuration.md, "Retention"), against DynamoDB
 * Local: the blobs of originals past their retention and blobs no message names go; a blob a kept
 * message names stays, even when an expired one names it too; a blob named by a message written
 * while the sweep ran is put back; `npm run ops -- sweep-blobs` runs it; and the blob expiry
 * (functions/blob-expiry.ts) deletes the blobs of the originals DynamoDB's TTL removed, read from
 * the stream records of those deletions.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { MessageInput } from "../../core/domain/fields.js";
import type { Memory, Message } from "../../core/domain/model.js";
import { sha256Hex } from "../../core/domain/native/blob-parts.js";
import { endLine, headerLine, memoryLine, messageLine, processLine } from "../../core/domain/process-export.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { messageSk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { ttlRemovedBlobs, type StreamRecord } from "../../core/adapters/dynamodb/ttl-removals.js";
import { expireBlobs, sweepBlobs } from "../../core/services/blob-sweep.js";
import { appendMessage, getMessage } from "../../core/services/messages.js";
import { importProcess } from "../../core/services/process-import.js";
import { runOpsCli } from "../../scripts/ops.js";
import { readAllMessages } from "../../tools/invariants.js";
import { nativeViolations } from "../../tools/native-invariants.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

let table: Awaited<ReturnType<typeof freshTable>>;
let deps: ServiceDeps;
let blobs: BlobStore;
let key: ProcessKey;
let n = 0;

/** A string past the inline part size, and the sha of the blob it is kept as. */
const part = (label: string) => {
  const text = `${label}: ${"archived tool output 📜 ".repeat(500)}`;
  return { text, sha: sha256Hex(JSON.stringify(text)) };
};
const [shared, expiredOnly, stillKept, orphan, late] = ["shared", "expired-only", "still-kept", "orphan", "late"].map(part) as [
  ReturnType<typeof part>,
  ReturnType<typeof part>,
  ReturnType<typeof part>,
  ReturnType<typeof part>,
  ReturnType<typeof part>,
];

const result = (callId: string, text: string) => ({ format: "anthropic" as const, content: [{ type: "tool_result", tool_use_id: callId, content: text }] });

/**
 * A process whose summary archived three originals: one past its retention naming `expiredOnly`,
 * one past it naming `shared`, one kept until 2099 naming `stillKept`; an active message names
 * `shared` too. Written by an import, the way an expired original can be made on purpose.
 */
function file(processId: string): string {
  const t = (s: number) => new Date(Date.parse("2026-01-01T00:00:00.000Z") + s * 1000).toISOString();
  const memoryId = "mem_01KBSWEEP0000000000000000";
  const message = (i: number, over: Partial<Message>): Message => ({
    id: `msg_01KBSWEEP00000000000000000${i}`,
    processId,
    role: "TOOL",
    content: `result ${i}`,
    tags: [],
    createdAt: t(i),
    archivedInMemoryId: memoryId,
    tokens: 10,
    ...over,
  });
  const messages = [
    message(1, { toolCallId: "c1", native: result("c1", expiredOnly.text), expiresAt: t(100) }),
    message(2, { toolCallId: "c2", native: result("c2", shared.text), expiresAt: t(100) }),
    // Active: an archived original expires as its memory's retention says, whatever its line says.
    message(3, { toolCallId: "c3", native: result("c3", stillKept.text), archivedInMemoryId: null }),
  ];
  const archived = messages.slice(0, 2);
  const memory: Memory = {
    id: memoryId,
    processId,
    kind: "ARCHIVED_CHAT",
    status: "OK",
    content: "two tool results",
    sourceRefs: archived.map((m) => m.id),
    metadata: { compactedMessages: 2, provider: "offline", model: "offline", retentionDays: 1 },
    createdAt: t(10),
    supersededAt: null,
    tokens: 5,
  };
  return [
    headerLine(processId, t(200)),
    processLine({ processId, projectId: "proj", allowsCrossProjectSpawn: false, createdAt: t(0) }, memoryId),
    ...messages.map(messageLine),
    memoryLine(memory),
    endLine(messages.length, 1),
  ].join("");
}

beforeEach(async () => {
  table ??= await freshTable("sweep");
  blobs = createMemoryBlobStore();
  ({ deps } = testContainer({ store: table.store }));
  deps.blobs = blobs;
  key = { tenantId: "sweep", processId: `p-${++n}` };
  await importProcess(deps, key, file(key.processId), { remapIds: false });
  await appendMessage(deps, key, MessageInput.parse({ native: result("c4", shared.text) }));
  await blobs.put(key, orphan.sha, new TextEncoder().encode(JSON.stringify(orphan.text)));
}, 30_000);

const stored = async () => (await blobs.list(key)).sort();

describe("sweeping blobs", () => {
  it("deletes the blobs only expired originals or no message name, keeps every blob a kept message names, and every kept message still reads back", async () => {
    expect(await stored()).toEqual([shared.sha, expiredOnly.sha, stillKept.sha, orphan.sha].sort());
    const swept = await sweepBlobs(deps, key);
    expect(swept).toEqual({ listed: 4, kept: 2, deleted: expect.arrayContaining([expiredOnly.sha, orphan.sha]), restored: [] });
    expect(swept.deleted).toHaveLength(2);
    expect(await stored()).toEqual([shared.sha, stillKept.sha].sort());
    expect(await nativeViolations(deps, key, await readAllMessages(table.store, key))).toEqual([]);
    expect((await getMessage(deps, key, "msg_01KBSWEEP000000000000000003")).native?.content).toEqual(result("c3", stillKept.text).content);
    // A second sweep finds nothing more.
    expect(await sweepBlobs(deps, key)).toEqual({ listed: 2, kept: 2, deleted: [], restored: [] });
  });

  it("a dry run lists what it would delete and deletes nothing", async () => {
    const swept = await sweepBlobs(deps, key, { dryRun: true });
    expect([...swept.deleted].sort()).toEqual([expiredOnly.sha, orphan.sha].sort());
    expect(await stored()).toHaveLength(4);
  });

  it("a blob a message written during the sweep names is put back", async () => {
    const lateBytes = new TextEncoder().encode(JSON.stringify(late.text));
    await blobs.put(key, late.sha, lateBytes);
    // An append whose blob was put before the sweep listed it, and whose message lands just before the delete.
    let appended = false;
    const racing: BlobStore = {
      ...blobs,
      delete: async (scope, sha) => {
        if (sha === late.sha && !appended) {
          appended = true;
          await appendMessage(deps, key, MessageInput.parse({ native: result("c5", late.text) }));
        }
        return blobs.delete!(scope, sha);
      },
    };
    const swept = await sweepBlobs({ ...deps, blobs: racing }, key);
    expect(swept.restored).toEqual([late.sha]);
    expect(swept.deleted).not.toContain(late.sha);
    expect(await blobs.get(key, late.sha)).toEqual(lateBytes);
    expect(await nativeViolations(deps, key, await readAllMessages(table.store, key))).toEqual([]);
  });

  it("npm run ops -- sweep-blobs runs it, and refuses without a blob store or for an unknown process", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { env: {}, store: table.store, blobs, out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    expect(await runOpsCli(["sweep-blobs", "--tenant", key.tenantId, "--process", key.processId, "--dry-run"], io)).toBe(0);
    expect(out.at(-1)).toBe("would delete: 2, kept: 2 of 4 blobs");
    expect(await stored()).toHaveLength(4);
    expect(await runOpsCli(["sweep-blobs", "--tenant", key.tenantId, "--process", key.processId], io)).toBe(0);
    expect(out.at(-1)).toBe("deleted: 2, kept: 2 of 4 blobs");
    expect(await stored()).toEqual([shared.sha, stillKept.sha].sort());

    expect(await runOpsCli(["sweep-blobs", "--tenant", key.tenantId, "--process", "nobody"], io)).toBe(1);
    expect(err.at(-1)).toBe("refused (process.not_found): process 'nobody' not found");
    expect(await runOpsCli(["sweep-blobs", "--tenant", key.tenantId, "--process", key.processId], { ...io, blobs: undefined })).toBe(2);
    expect(await runOpsCli(["sweep-blobs", "--tenant", key.tenantId], io)).toBe(2);
  });
});

describe("expiring blobs with the originals TTL removed", () => {
  const ttl = { type: "Service", principalId: "dynamodb.amazonaws.com" };

  /** Deletes the message's item as DynamoDB's TTL would, and answers the stream record of that deletion. */
  async function removeAsTtl(messageId: string, userIdentity: StreamRecord["userIdentity"] = ttl): Promise<StreamRecord> {
    const Key = { pk: processPk(key), sk: messageSk(messageId) };
    const { Item } = await table.client.send(new GetCommand({ TableName: table.tableName, Key }));
    expect(Item).toBeDefined();
    await table.client.send(new DeleteCommand({ TableName: table.tableName, Key }));
    return { eventName: "REMOVE", userIdentity, dynamodb: { OldImage: marshall(Item!, { removeUndefinedValues: true }) as never } };
  }

  /** What functions/blob-expiry.ts does with a batch of records. */
  async function expire(records: StreamRecord[]) {
    let deleted = 0;
    for (const { key: k, shas } of ttlRemovedBlobs(records)) deleted += (await expireBlobs(deps, k, shas)).deleted.length;
    return deleted;
  }

  it("deletes the blob only an expired original named, keeps the one an active message shares, and leaves every other blob", async () => {
    const records = [await removeAsTtl("msg_01KBSWEEP000000000000000001"), await removeAsTtl("msg_01KBSWEEP000000000000000002")];
    expect(ttlRemovedBlobs(records)).toEqual([{ key, shas: [expiredOnly.sha, shared.sha] }]);
    expect(await expire(records)).toBe(1);
    // The orphan is no removed original's: only the sweep deletes it.
    expect(await stored()).toEqual([shared.sha, stillKept.sha, orphan.sha].sort());
    expect(await nativeViolations(deps, key, await readAllMessages(table.store, key))).toEqual([]);
    // Delivered again (a retried batch): nothing more goes.
    expect(await expire(records)).toBe(0);
    expect(await stored()).toHaveLength(3);
  });

  it("leaves the blobs of a deletion the service made, and of items without blobs, to the sweep and the process's deletion", async () => {
    const byService = await removeAsTtl("msg_01KBSWEEP000000000000000001", { type: "AWS", principalId: "AIDAEXAMPLE" });
    const modify: StreamRecord = { ...byService, eventName: "MODIFY", userIdentity: ttl };
    const meta: StreamRecord = { eventName: "REMOVE", userIdentity: ttl, dynamodb: { OldImage: { pk: { S: processPk(key) }, sk: { S: "META" }, native: { S: "{}" } } } };
    expect(ttlRemovedBlobs([byService, modify, meta])).toEqual([]);
    expect(await expire([byService, modify, meta])).toBe(0);
    expect(await stored()).toHaveLength(4);
  });

  it("skips a process deleted since (its blobs went with it)", async () => {
    const record = await removeAsTtl("msg_01KBSWEEP000000000000000001");
    const gone = { ...key, processId: "deleted-meanwhile" };
    expect(await expireBlobs(deps, gone, [expiredOnly.sha])).toEqual({ listed: 0, kept: 0, deleted: [], restored: [] });
    expect(await expire([record])).toBe(1);
  });
});

describe("an append racing the blob expiry", () => {
  it("puts back a blob the expiry deleted between the append's put and its write, so the new message reads back whole", async () => {
    // The append names `expiredOnly` again, as an expired original did: the expiry, run in full
    // right after the append's put and before its write, finds no written message naming it.
    let raced: Awaited<ReturnType<typeof expireBlobs>> | undefined;
    const racing: BlobStore = {
      ...blobs,
      put: async (scope, sha, bytes) => {
        await blobs.put(scope, sha, bytes);
        if (sha === expiredOnly.sha && !raced) raced = await expireBlobs({ ...deps, blobs }, key, [sha]);
      },
    };
    const racingDeps = { ...deps, blobs: racing };
    await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: processPk(key), sk: messageSk("msg_01KBSWEEP000000000000000001") } }));
    const { message } = await appendMessage(racingDeps, key, MessageInput.parse({ native: result("c6", expiredOnly.text) }));
    expect(raced?.deleted).toEqual([expiredOnly.sha]);
    expect(await blobs.has(key, expiredOnly.sha)).toBe(true);
    expect((await getMessage(deps, key, message.id)).native?.content).toEqual(result("c6", expiredOnly.text).content);
    expect(await nativeViolations(deps, key, await readAllMessages(table.store, key))).toEqual([]);
  });
});
