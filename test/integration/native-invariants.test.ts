/**
 * The stored-data invariant of native content (tools/invariants.ts), against DynamoDB Local: it
 * holds for what appends wrote, and fails when a blob or the message item's stored JSON is changed
 * behind the service's back, or a blob is gone.
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { messageSk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { MessageInput } from "../../core/domain/fields.js";
import { storedNative } from "../../core/domain/model.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { checkInvariants } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

let table: Awaited<ReturnType<typeof freshTable>>;
let deps: ServiceDeps;
let blobs: BlobStore;
let n = 0;
let key: ProcessKey;
let withBlob: string;
let inline: string;

const large = "tool output line ✓\n".repeat(1_000);

beforeEach(async () => {
  table ??= await freshTable("ninv");
  blobs = createMemoryBlobStore();
  ({ deps } = testContainer({ store: table.store }));
  deps.blobs = blobs;
  key = { tenantId: "ninv", processId: `p-${++n}` };
  await upsertProcess(deps, key.tenantId, key.processId, { projectId: "proj" });
  await appendMessage(deps, key, { role: "USER", content: "run it" });
  const call = [
    { type: "thinking", thinking: "run the tool", signature: "sig-abc" },
    { type: "tool_use", id: "toolu_1", name: "run", input: {} },
  ];
  inline = (await appendMessage(deps, key, MessageInput.parse({ native: { format: "anthropic", content: call } }))).message.id;
  const result = [{ type: "tool_result", tool_use_id: "toolu_1", content: large }];
  withBlob = (await appendMessage(deps, key, MessageInput.parse({ native: { format: "anthropic", content: result } }))).message.id;
}, 30_000);

const check = () => checkInvariants(table.store, key, { native: deps, settled: true });

async function rewriteStored(id: string, edit: (stored: any) => void) {
  const m = (await table.store.getMessage(key, id))!;
  const stored = structuredClone(storedNative(m)!);
  edit(stored);
  await table.client.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: processPk(key), sk: messageSk(id) },
      UpdateExpression: "SET #n = :n",
      ExpressionAttributeNames: { "#n": "native" },
      ExpressionAttributeValues: { ":n": JSON.stringify(stored) },
    }),
  );
}

describe("the native content invariant", () => {
  it("holds for what appends stored, blobs included", async () => {
    const m = (await table.store.getMessage(key, withBlob))!;
    expect(storedNative(m)?.blobs).toHaveLength(1);
    expect(await check()).toEqual([]);
  });

  it("fails when a stored blob's bytes are changed", async () => {
    const [sha] = await blobs.list(key);
    const bytes = (await blobs.get(key, sha!))!;
    await blobs.deleteProcess(key);
    await blobs.put(key, sha!, new TextEncoder().encode(new TextDecoder().decode(bytes).replace("✓", "✗")));
    const found = await check();
    expect(found).toEqual([expect.stringContaining(`message ${withBlob}: blob ${sha} holds other bytes`)]);
  });

  it("fails when a blob is gone", async () => {
    const [sha] = await blobs.list(key);
    await blobs.deleteProcess(key);
    expect(await check()).toEqual([expect.stringContaining(`message ${withBlob}: blob ${sha} of its native content is missing`)]);
  });

  it("fails when the stored JSON of a message's native content is changed", async () => {
    await rewriteStored(inline, (stored) => (stored.content[0].signature = "sig-abd"));
    expect(await check()).toEqual([expect.stringMatching(new RegExp(`message ${inline}: its native content reads back with hash [0-9a-f]{64}, the item keeps`))]);
  });

  it("fails when the stored JSON points a blob at another place", async () => {
    await rewriteStored(withBlob, (stored) => (stored.blobs[0].path = [0, "other"]));
    expect(await check()).toEqual([expect.stringContaining(`message ${withBlob}: its native content reads back with hash`)]);
  });
});
