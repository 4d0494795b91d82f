/**
 * A provider's block past what a memory item keeps inline (docs/summarizers.md, "Where the block is
 * kept"), against DynamoDB Local and the S3-compatible blob store (s3rver): the fold puts it as a
 * blob before it commits and the memory names it; a turn that replays it reads it back byte-exact,
 * a turn that does not reads no blob, the next fold chains it; an export carries it whole and an
 * import puts its blob first; the sweep never deletes it (undo and expired originals included) but
 * deletes the blob of a fold that never committed, was discarded or expired unused, and a sweep
 * racing the commit is undone; a process deletion and a tenant erasure remove it. The limits, each
 * at the limit and one byte past it: the inline size, and the largest block a memory keeps (past
 * it, the readable summary alone, noted).
 */
import { DeleteCommand, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { memorySk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { ttlRemovedBlobs, type StreamRecord } from "../../core/adapters/dynamodb/ttl-removals.js";
import { createS3BlobStore } from "../../core/adapters/blobs/s3-blob-store.js";
import type { Memory } from "../../core/domain/model.js";
import { NATIVE_INLINE_MAX_BYTES, sha256Hex } from "../../core/domain/native/blob-parts.js";
import type { NativeContent } from "../../core/domain/native/formats.js";
import { NATIVE_BLOCK_MAX_BYTES } from "../../core/domain/native/memory-block.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { expireBlobs, sweepBlobs } from "../../core/services/blob-sweep.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { memoryDetail } from "../../core/services/memories.js";
import { appendMessage } from "../../core/services/messages.js";
import { keepBlock } from "../../core/services/native-content.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { exportPage } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { eraseTenant } from "../../core/services/tenant-erasure.js";
import { runTurn } from "../../core/services/turn.js";
import { testContainer } from "../support/container.js";
import { blockViolations } from "../../tools/native-invariants.js";
import { freshTable } from "../support/dynamo.js";
import { makeMemory } from "../support/fixtures.js";
import { createFakeSummarizer, type FakeSummarizer } from "../support/fake-summarizer.js";
import { freshBucket } from "../support/s3.js";

const TENANT = "pbb";
const MODEL = "claude-fable-5-1";
const DAY_MS = 86_400_000;
const model = { name: MODEL, contextWindow: 10_000 };
let table: Awaited<ReturnType<typeof freshTable>>;
let blobs: BlobStore;
let deps: ServiceDeps;
let fake: FakeSummarizer;
/** Blob reads since the test began. */
let gets = 0;
/** The services' clock: the wall clock plus what a test moved it on. */
let skippedMs = 0;

beforeAll(async () => {
  const [t, bucket] = await Promise.all([freshTable("pbb"), freshBucket("pbb")]);
  table = t;
  const s3 = createS3BlobStore(bucket);
  blobs = { ...s3, get: (scope, sha) => (gets++, s3.get(scope, sha)) };
  // The scripted summarizer as a provider fold: it returns the block each test gives it.
  fake = createFakeSummarizer();
  const summarizer: Summarizer = Object.assign(fake, { provider: "anthropic", foldFormat: "anthropic" as const, model: MODEL });
  ({ deps } = testContainer({ store: table.store, summarizer, retryDelaysMs: [], clock: { now: () => new Date(Date.now() + skippedMs) } }));
  deps.blobs = blobs;
}, 30_000);
afterEach(() => {
  skippedMs = 0;
  gets = 0;
  fake.script.length = 0;
});

/**
 * A `compaction` block of exactly `bytes` bytes of JSON (`{ format, content }`, as the limits count
 * it), with strings JSON alone keeps exactly: a lone surrogate, an emoji, a quote.
 */
function blockOf(bytes: number, seed: string): NativeContent {
  const make = (pad: string) => ({ format: "anthropic" as const, content: [{ type: "compaction", content: `${seed} \ud800 📜 "kept"`, signature: pad }] });
  return make("s".repeat(bytes - Buffer.byteLength(JSON.stringify(make("")))));
}
const shaOf = (block: NativeContent) => sha256Hex(JSON.stringify(block.content));

/** A process with 12 messages and, with `block`, one provider fold that returned it. */
async function folded(processId: string, block: NativeContent, o: { days?: number; tenantId?: string; via?: ServiceDeps } = {}): Promise<{ k: ProcessKey; memory: Memory }> {
  const k = { tenantId: o.tenantId ?? TENANT, processId };
  const d = o.via ?? deps;
  if (o.days) await table.store.putSettings(k.tenantId, `p-${processId}`, { retentionDays: o.days }, new Date().toISOString());
  await upsertProcess(deps, k.tenantId, processId, { projectId: `p-${processId}` });
  const texts: string[] = [];
  for (let i = 0; i < 12; i++) {
    const text = `step ${i}: crate ${i} goes to dock ${i % 4}.`;
    texts.push(text);
    await appendMessage(deps, k, { role: i % 2 === 0 ? "USER" : "ASSISTANT", content: text, native: { format: "anthropic", content: [{ type: "text", text }] } });
  }
  fake.script.push({ ok: true, summary: texts.join("\n"), native: block });
  const out = await compactManually(d, k, { model, force: "HARD" });
  expect(out.result.compacted, JSON.stringify(out.result)).toBe(true);
  return { k, memory: (await deps.store.getMemory(k, out.result.memoryId!))! };
}

const anthropicTurn = (k: ProcessKey) => runTurn(deps, k, { model, format: "anthropic" });
/** The SHA-256 of a value's JSON text: byte-exact is checked on it (a failure then prints no megabytes). */
const digest = (value: unknown) => sha256Hex(JSON.stringify(value) ?? "undefined");
/** The digest of the first message of an Anthropic request. */
const leading = (turn: Awaited<ReturnType<typeof runTurn>>) => digest((turn.request as { messages: Array<{ content: unknown }> }).messages[0]!.content);
/** What the stored-data invariant of memories' block blobs finds wrong in the process. */
const blocksBroken = async (k: ProcessKey) => blockViolations(deps, k, await deps.store.listMemories(k));
/** The memory's item as the table holds it. */
async function memoryItem(k: ProcessKey, id: string) {
  const out = await table.client.send(new QueryCommand({ TableName: table.tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": processPk(k) }, ConsistentRead: true }));
  return (out.Items ?? []).find((i) => i.type === "MEM" && i.id === id)!;
}

describe("a provider's block past the inline size", () => {
  it("is put as a blob before the commit and named by the memory; a turn replays it byte-exact, the memory's detail answers it whole", async () => {
    const block = blockOf(200_000, "big-1");
    const { k, memory } = await folded("big-1", block);
    expect(memory.metadata.providerFold).toMatchObject({ format: "anthropic", block: true });
    expect(memory.native).toBeUndefined();
    expect(memory.nativeBlob).toMatchObject({ format: "anthropic", sha256: shaOf(block) });
    expect(await blobs.list(k)).toContain(shaOf(block));
    // The item holds the blob's name, not the block.
    expect(String((await memoryItem(k, memory.id)).native).length).toBeLessThan(1_000);

    const turn = await anthropicTurn(k);
    expect(turn.providerBlock).toEqual({ memoryId: memory.id, format: "anthropic", sent: true });
    expect(leading(turn)).toBe(digest(block.content));
    const detail = (await memoryDetail(deps, k, memory.id)).memory;
    expect(digest(detail.native)).toBe(digest(block));
    expect(detail.nativeBlob).toBeUndefined();
  });

  it("the next fold chains the block read back from its blob; a refusal of it is noted, and turns then replay the summary", async () => {
    const block = blockOf(150_000, "chain-1");
    const { k, memory } = await folded("chain-1", block);
    for (let i = 12; i < 20; i++) await appendMessage(deps, k, { role: i % 2 === 0 ? "USER" : "ASSISTANT", content: `step ${i}: crate ${i} waits.` });
    const next = blockOf(90_000, "chain-2");
    fake.script.push({ ok: true, summary: "steps 0 to 19: the crates go to the docks and wait.", native: next });
    const out = await compactManually(deps, k, { model, force: "HARD" });
    expect(out.result.compacted, JSON.stringify(out.result)).toBe(true);
    expect(digest(fake.calls.at(-1)!.providerFold?.priorNative)).toBe(digest(block));

    const head = (await deps.store.getMemory(k, out.result.memoryId!))!;
    expect(head.nativeBlob?.sha256).toBe(shaOf(next));
    await runTurn(deps, k, { model, format: "anthropic", blockRefused: { memoryId: head.id, error: "compaction_signature_invalid" } });
    expect((await deps.store.getMemory(k, head.id))!.metadata.providerFold?.refused).toMatchObject({ error: "compaction_signature_invalid" });
    const after = await anthropicTurn(k);
    expect(after.providerBlock).toMatchObject({ memoryId: head.id, sent: false, reason: "refused" });
    expect(JSON.stringify(after.request)).not.toContain('"type":"compaction"');
    // Both blocks stay: the superseded summary's too.
    expect((await sweepBlobs(deps, k)).deleted).toEqual([]);
    expect((await blobs.list(k)).sort()).toEqual([memory.nativeBlob!.sha256, shaOf(next)].sort());
  });

  it("a turn that does not replay the block reads no blob", async () => {
    const { k } = await folded("big-2", blockOf(100_000, "big-2"));
    gets = 0;
    await runTurn(deps, k, { model });
    const other = await runTurn(deps, k, { model, format: "openai-responses" });
    expect(other.providerBlock).toMatchObject({ sent: false, reason: "format" });
    expect(gets).toBe(0);
    expect((await anthropicTurn(k)).providerBlock).toMatchObject({ sent: true });
    expect(gets).toBe(1);
  });

  it("the replay index reads a summary whose block is a blob at the cost of one without a block", async () => {
    const rcu = async (processId: string, over: Partial<Memory>) => {
      const k = { tenantId: TENANT, processId };
      await upsertProcess(deps, TENANT, processId, { projectId: "p-rcu" });
      await appendMessage(deps, k, { role: "USER", content: "next" });
      await table.store.putMemory(k, makeMemory(processId, over));
      return (await table.store.activeView(k))!.consumedCapacity!;
    };
    const blob = { format: "anthropic" as const, sha256: "9f".repeat(32), bytes: 4_000_000 };
    expect(await rcu("rcu-blob", { nativeBlob: blob })).toBe(await rcu("rcu-none", {}));
  });

  it(`at ${NATIVE_INLINE_MAX_BYTES} bytes the block stays on the item; one byte past, it is a blob`, async () => {
    const at = blockOf(NATIVE_INLINE_MAX_BYTES, "inline-at");
    const inline = await folded("inline-at", at);
    expect([digest(inline.memory.native), inline.memory.nativeBlob]).toEqual([digest(at), undefined]);
    expect(await blobs.list(inline.k)).toEqual([]);
    const past = blockOf(NATIVE_INLINE_MAX_BYTES + 1, "inline-past");
    const blob = await folded("inline-past", past);
    expect([blob.memory.native, blob.memory.nativeBlob?.sha256]).toEqual([undefined, shaOf(past)]);
    expect(leading(await anthropicTurn(blob.k))).toBe(digest(past.content));
  });

  it(`at ${NATIVE_BLOCK_MAX_BYTES} bytes a memory keeps the block; one byte past, the readable summary alone, noted, and no blob`, async () => {
    const at = blockOf(NATIVE_BLOCK_MAX_BYTES, "max-at");
    const kept = await folded("max-at", at);
    expect(kept.memory.metadata.providerFold).toMatchObject({ block: true });
    expect(kept.memory.nativeBlob?.sha256).toBe(shaOf(at));
    expect(leading(await anthropicTurn(kept.k))).toBe(digest(at.content));

    const past = await folded("max-past", blockOf(NATIVE_BLOCK_MAX_BYTES + 1, "max-past"));
    expect(past.memory.metadata.providerFold).toEqual({
      format: "anthropic",
      block: false,
      note: `too_large: the block has ${NATIVE_BLOCK_MAX_BYTES + 1} bytes, a memory keeps at most ${NATIVE_BLOCK_MAX_BYTES}`,
    });
    expect([past.memory.native, past.memory.nativeBlob]).toEqual([undefined, undefined]);
    expect(await blobs.list(past.k)).toEqual([]);
    expect((await anthropicTurn(past.k)).providerBlock).toBeUndefined();
  }, 60_000);
});

/** The memory of an export's memory line. */
const memoryLineOf = (text: string): Memory =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { kind?: string; memory?: Memory })
    .find((l) => l.kind === "memory")!.memory!;

describe("the block's blob through the data lifecycle", () => {
  it("a crash between the blob's put and the commit leaves an orphan the sweep deletes; the committed block's blob stays", async () => {
    const lost = blockOf(90_000, "crash-lost");
    const crashing = { ...deps, store: { ...deps.store, commitCompaction: async () => Promise.reject(new Error("crashed before the commit")) } };
    const k = { tenantId: TENANT, processId: "crash-1" };
    await expect(folded("crash-1", lost, { via: crashing })).rejects.toThrow("crashed before the commit");
    expect(await blobs.list(k)).toEqual([shaOf(lost)]);
    expect((await deps.store.listMemories(k)).filter((m) => m.status === "OK")).toEqual([]);

    const kept = blockOf(90_000, "crash-kept");
    fake.script.push({ ok: true, summary: "step 0 to step 11: the crates go to the docks.", native: kept });
    const out = await compactManually(deps, k, { model, force: "HARD" });
    expect(out.result.compacted, JSON.stringify(out.result)).toBe(true);
    const swept = await sweepBlobs(deps, k);
    expect(swept).toMatchObject({ listed: 2, kept: 1, deleted: [shaOf(lost)] });
    expect(await blobs.list(k)).toEqual([shaOf(kept)]);
    expect(leading(await anthropicTurn(k))).toBe(digest(kept.content));
  });

  it("a sweep run between the blob's put and the commit deletes it; the fold puts it back once its row is written", async () => {
    const block = blockOf(90_000, "race-1");
    let raced: Awaited<ReturnType<typeof sweepBlobs>> | undefined;
    const racing: BlobStore = {
      ...blobs,
      put: async (scope, sha, bytes) => {
        await blobs.put(scope, sha, bytes);
        if (sha === shaOf(block) && !raced) raced = await sweepBlobs(deps, scope);
      },
    };
    const { k } = await folded("race-1", block, { via: { ...deps, blobs: racing } });
    expect(raced?.deleted).toEqual([shaOf(block)]);
    expect(await blobs.list(k)).toEqual([shaOf(block)]);
    expect(leading(await anthropicTurn(k))).toBe(digest(block.content));
    expect(await blocksBroken(k)).toEqual([]);
  });

  it("a prepared fold's blob is kept; once discarded the sweep deletes it; its row removed unused by TTL, the blob expiry does", async () => {
    const { k } = await folded("fold-1", blockOf(70_000, "fold-1-summary"));
    const summary = (await blobs.list(k))[0]!;
    // Two prepared folds, each with its block put and named as the prepare job writes them.
    const prepare = async (seed: string) => {
      const fold = await keepBlock(deps, k, makeMemory(k.processId, { status: "PREPARED", native: blockOf(70_000, seed), metadata: { compactedMessages: 1, provider: "anthropic", model: MODEL, expiresAt: new Date(Date.now() + DAY_MS).toISOString() } }));
      expect(await table.store.storeFold(k, fold, "new")).toEqual({ ok: true });
      return fold;
    };
    const [discarded, expired] = [await prepare("fold-1-discarded"), await prepare("fold-1-expired")];
    expect((await sweepBlobs(deps, k)).deleted).toEqual([]);
    expect((await deps.store.getMemory(k, discarded.id))!.nativeBlob).toEqual(discarded.nativeBlob);

    expect(await table.store.discardFold(k, discarded.id, "PREPARED", "superseded", new Date().toISOString())).toEqual({ ok: true });
    expect((await sweepBlobs(deps, k)).deleted).toEqual([discarded.nativeBlob!.sha256]);
    // The discarded fold still exports, without the block the sweep removed.
    const lines = (await exportPage(deps, k)).text.split("\n").filter((l) => l.includes(discarded.id));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/"native(Blob)?":/);

    // DynamoDB's TTL removes the unused fold's row; the stream's record of it names the blob.
    const Key = { pk: processPk(k), sk: memorySk(expired.id) };
    const { Item } = await table.client.send(new GetCommand({ TableName: table.tableName, Key }));
    await table.client.send(new DeleteCommand({ TableName: table.tableName, Key }));
    const record: StreamRecord = { eventName: "REMOVE", userIdentity: { type: "Service", principalId: "dynamodb.amazonaws.com" }, dynamodb: { OldImage: marshall(Item!, { removeUndefinedValues: true }) as never } };
    const removed = ttlRemovedBlobs([record]);
    expect(removed).toEqual([{ key: k, shas: [expired.nativeBlob!.sha256] }]);
    expect((await expireBlobs(deps, k, removed[0]!.shas)).deleted).toEqual([expired.nativeBlob!.sha256]);
    expect(await blobs.list(k)).toEqual([summary]);
    expect(await blocksBroken(k)).toEqual([]);
  });

  it("undo: the REVERTED memory keeps its block, the sweep keeps its blob, its detail answers it whole", async () => {
    const block = blockOf(120_000, "undo-1");
    const { k, memory } = await folded("undo-1", block);
    await revertMemory(deps, k, memory.id);
    const reverted = (await deps.store.getMemory(k, memory.id))!;
    expect([reverted.status, reverted.nativeBlob]).toEqual(["REVERTED", memory.nativeBlob]);
    expect((await sweepBlobs(deps, k)).deleted).toEqual([]);
    expect(digest((await memoryDetail(deps, k, memory.id)).memory.native)).toBe(digest(block));
    expect(await blocksBroken(k)).toEqual([]);
    // The invariant check sees a block whose blob went missing.
    await blobs.delete!(k, shaOf(block));
    expect(await blocksBroken(k)).toEqual([`${TENANT}/undo-1: memory ${memory.id}: blob ${shaOf(block)} of its block is missing`]);
  });

  it("originals expiring leave the block, its blob and its replay as they were", async () => {
    const block = blockOf(120_000, "retention-1");
    const { k, memory } = await folded("retention-1", block, { days: 1 });
    const before = await anthropicTurn(k);
    skippedMs = 2 * DAY_MS;
    expect((await sweepBlobs(deps, k)).deleted).toEqual([]);
    expect(await blobs.list(k)).toEqual([shaOf(block)]);
    const after = await anthropicTurn(k);
    expect(after.providerBlock).toMatchObject({ memoryId: memory.id, sent: true });
    expect(after.request).toEqual(before.request);
  });

  it("an export carries the block whole; an import puts its blob first, and the copy replays it byte-exact", async () => {
    const block = blockOf(150_000, "export-1");
    const { k, memory } = await folded("export-1", block);
    const text = (await exportPage(deps, k)).text;
    const line = memoryLineOf(text);
    expect(digest(line.native)).toBe(digest(block));
    expect(line.nativeBlob).toBeUndefined();

    const copy = { tenantId: TENANT, processId: "export-1-copy" };
    await importProcess(deps, copy, text, { remapIds: false });
    expect(await blobs.list(copy)).toEqual([shaOf(block)]);
    expect((await deps.store.getMemory(copy, memory.id))!.nativeBlob).toEqual(memory.nativeBlob);
    expect(leading(await anthropicTurn(copy))).toBe(digest(block.content));
    expect(await blocksBroken(copy)).toEqual([]);
    // The copy exports the same block again.
    expect(digest(memoryLineOf((await exportPage(deps, copy)).text).native)).toBe(digest(block));
  });

  it("a process deletion and a tenant erasure remove the block's blob", async () => {
    const { k } = await folded("delete-1", blockOf(80_000, "delete-1"));
    expect(await blobs.list(k)).toHaveLength(1);
    expect(await deleteProcess(deps, k)).toEqual({ status: "deleted" });
    expect(await blobs.list(k)).toEqual([]);

    const gone = await folded("erase-1", blockOf(80_000, "erase-1"), { tenantId: "pbb-gone" });
    expect(await blobs.list(gone.k)).toHaveLength(1);
    const erased = await eraseTenant(table.store, "pbb-gone", new Date().toISOString(), blobs);
    expect(erased.left).toEqual([]);
    expect(await blobs.list(gone.k)).toEqual([]);
  });
});
