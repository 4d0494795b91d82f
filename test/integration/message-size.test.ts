/**
 * The message limit against the real DynamoDB Local engine (docs/configuration.md, "Limits"): a message of
 * MAX_MESSAGE_BYTES with every other field at its own limit is stored and read back whole, also
 * after the service adds its tags, a PATCH and a clearing round; one byte more is a 413
 * `message.too_large` that writes nothing. A stored item that still outgrows DynamoDB's 400 KB
 * (one stored under an earlier, larger limit) is a 413 or a skipped write, never a 500.
 */
import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { messageToItem } from "../../core/adapters/dynamodb/items.js";
import { AppError } from "../../core/domain/errors.js";
import { MAX_MESSAGE_BYTES, messageBytes } from "../../core/domain/fields.js";
import type { Message } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { freshTable } from "../support/dynamo.js";
import { makeMessage } from "../support/fixtures.js";
import { LONGEST_ID, LONGEST_TOOL_NAME, callerMessage, utf8Filler } from "../support/message-size.js";
import { testContainer } from "../support/container.js";

let store: Store;
let client: Awaited<ReturnType<typeof freshTable>>["client"];
let tableName: string;
let deps: ServiceDeps;
let seq = 0;

beforeAll(async () => {
  ({ store, client, tableName } = await freshTable("size"));
  // The strength analyzer's side channel on: it adds two tags to a USER message it rates.
  ({ deps } = testContainer({ store, env: { STRENGTH_SIDE_CHANNEL_ENABLED: "true" } }));
});

/** A process with the longest ids the API accepts. */
async function longestProcess(): Promise<ProcessKey> {
  const n = String(++seq);
  const key = { tenantId: "t".repeat(LONGEST_ID - n.length) + n, processId: "p".repeat(LONGEST_ID - n.length) + n };
  await store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "size" }, new Date().toISOString());
  return key;
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "ok";
  } catch (e) {
    if (e instanceof AppError) return `${e.kind}:${e.code}`;
    throw e;
  }
};

const history = async (key: ProcessKey) => (await store.listMessages(key, { limit: 1000 })).items;

/** The message as the caller sent it, read back from every path that reads messages. */
async function expectWhole(key: ProcessKey, sent: Message) {
  const one = await store.getMessage(key, sent.id);
  expect(one?.content).toBe(sent.content);
  expect(one?.toolCalls).toEqual(sent.toolCalls);
  expect(one?.tags).toEqual(sent.tags);
  const listed = (await history(key)).find((m) => m.id === sent.id);
  expect(listed?.content).toBe(sent.content);
  const active = (await store.activeView(key))!.messages.find((m) => m.id === sent.id);
  expect(active?.content).toBe(sent.content);
}

describe("a message at the limit", () => {
  it("a 220,000-character message is a 413 message.too_large, not a 500, and writes nothing", async () => {
    const key = await longestProcess();
    expect(await codeOf(appendMessage(deps, key, { role: "USER", content: "x".repeat(220_000) }))).toBe("too_large:message.too_large");
    expect(await history(key)).toEqual([]);
  });

  for (const role of ["USER", "ASSISTANT", "TOOL"] as const) {
    it(`${role}: exactly the limit (multibyte content, 50 tags, tool calls at their limits) is stored and read back whole`, async () => {
      const key = await longestProcess();
      const body = callerMessage(role, MAX_MESSAGE_BYTES);
      expect(messageBytes(body)).toBe(MAX_MESSAGE_BYTES);
      const first = (await appendMessage(deps, key, body)).message;
      await expectWhole(key, first);
      if (role !== "USER") return;
      // The first USER message is auto-pinned; a later one is rated by the side channel (two tags).
      expect(first.tags).toEqual([...body.tags, "STRENGTH:pinned"]);
      const rated = (await appendMessage(deps, key, body)).message;
      expect(rated.tags.length).toBe(body.tags.length + 2);
      await expectWhole(key, rated);
    });

    it(`${role}: one byte over the limit is a 413 message.too_large and writes nothing`, async () => {
      const key = await longestProcess();
      const body = callerMessage(role, MAX_MESSAGE_BYTES + 1);
      expect(await codeOf(appendMessage(deps, key, body))).toBe("too_large:message.too_large");
      const ascii = { ...callerMessage(role, MAX_MESSAGE_BYTES), content: "" };
      const over = { ...ascii, content: "a".repeat(MAX_MESSAGE_BYTES - messageBytes(ascii) + 1) };
      expect(await codeOf(appendMessage(deps, key, over))).toBe("too_large:message.too_large");
      expect(await history(key)).toEqual([]);
    });
  }

  it("ASCII, 2-, 3- and 4-byte content each count their UTF-8 bytes: at the limit stored, one byte more refused", async () => {
    const key = await longestProcess();
    for (const unit of ["a", "é", "中", "😀"]) {
      const bytes = Buffer.byteLength(unit);
      const content = unit.repeat(Math.floor(MAX_MESSAGE_BYTES / bytes)) + "a".repeat(MAX_MESSAGE_BYTES % bytes);
      const { message } = await appendMessage(deps, key, { role: "ASSISTANT", content });
      await expectWhole(key, message);
      expect(await codeOf(appendMessage(deps, key, { role: "ASSISTANT", content: content + "a" }))).toBe("too_large:message.too_large");
    }
    expect(await history(key)).toHaveLength(4);
  });

  it("at the limit it still takes a PATCHed strength and a cleared result", async () => {
    const key = await longestProcess();
    const call = { role: "ASSISTANT" as const, content: "calling", toolCalls: [{ id: "c".repeat(256), name: LONGEST_TOOL_NAME, arguments: "{}" }] };
    await appendMessage(deps, key, call);
    const result = (await appendMessage(deps, key, callerMessage("TOOL", MAX_MESSAGE_BYTES))).message;
    const pinned = await setMessageStrength(deps, key, result.id, "strong");
    expect(pinned.tags.at(-1)).toBe("STRENGTH:strong");
    const cleared = { at: new Date().toISOString(), toolName: LONGEST_TOOL_NAME, chars: result.content.length, tokens: result.tokens };
    const out = await store.markCleared(key, [{ id: result.id, cleared, tokens: 40, expectedTags: pinned.tags }]);
    expect(out).toEqual({ cleared: [result.id], skipped: [] });
    const stored = await store.getMessage(key, result.id);
    expect(stored?.content).toBe(result.content);
    expect(stored?.cleared).toEqual(cleared);
  });
});

describe("an item stored under a larger limit", () => {
  /**
   * An active message as large as the engine keeps, with no room for another tag: what an earlier,
   * larger limit could leave behind. DynamoDB Local checks an update against the item alone (not
   * its index entry), so the item is searched for off the replay index, with a stand-in attribute
   * as large as the index key, and put on the index by an update of the same size.
   */
  async function atItemLimit(key: ProcessKey, role: Message["role"]): Promise<Message> {
    const base = makeMessage(key.processId, { role, tags: [], ...(role === "TOOL" ? { toolCallId: "c1" } : {}) });
    const offIndex = (n: number) => {
      const { lsi1sk, ...item } = messageToItem(key, { ...base, content: "x".repeat(n) });
      return { item, lsi1sk: lsi1sk! };
    };
    const put = async (item: Record<string, unknown>) => {
      try {
        await client.send(new PutCommand({ TableName: tableName, Item: item }));
        return true;
      } catch {
        return false;
      }
    };
    // "lsi1sX" has the index key's name length and value: the same bytes, no index entry.
    const fits = (n: number) => put({ ...offIndex(n).item, lsi1sX: offIndex(n).lsi1sk });
    let lo = 150_000;
    let hi = 420_000;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (await fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    const { item, lsi1sk } = offIndex(lo);
    expect(await put(item)).toBe(true);
    await client.send(new UpdateCommand({ TableName: tableName, Key: { pk: item.pk, sk: item.sk }, UpdateExpression: "SET lsi1sk = :a", ExpressionAttributeValues: { ":a": lsi1sk } }));
    const stored = (await store.activeView(key))!.messages.find((m) => m.id === base.id);
    expect(stored?.content.length).toBe(lo);
    return stored!;
  }

  it("a PATCH that would outgrow the item is a 413 message.too_large and changes nothing", async () => {
    const key = await longestProcess();
    const legacy = await atItemLimit(key, "USER");
    const version = (await store.getProcess(key))!.version;
    expect(await codeOf(setMessageStrength(deps, key, legacy.id, "pinned"))).toBe("too_large:message.too_large");
    expect((await store.getMessage(key, legacy.id))?.tags).toEqual([]);
    expect((await store.getProcess(key))!.version).toBe(version);
  });

  it("a clearing round skips a result it cannot mark instead of failing", async () => {
    const key = await longestProcess();
    const legacy = await atItemLimit(key, "TOOL");
    const cleared = { at: new Date().toISOString(), toolName: "tool", chars: legacy.content.length, tokens: legacy.tokens };
    const out = await store.markCleared(key, [{ id: legacy.id, cleared, tokens: 40, expectedTags: [] }]);
    expect(out).toEqual({ cleared: [], skipped: [legacy.id] });
    expect((await store.getMessage(key, legacy.id))?.cleared).toBeUndefined();
  });

  it("an append the store refuses for its size is a 413 message.too_large (the last line of defence)", async () => {
    const key = await longestProcess();
    const m = { ...makeMessage(key.processId), content: utf8Filler(300_000) };
    expect(await codeOf(store.appendMessage(key, m))).toBe("too_large:store.item_too_large");
    expect(await history(key)).toEqual([]);
  });
});
