/**
 * The message limit (docs/configuration.md, "Limits") is what the store can hold: a message at the limit, with
 * every other field at its own limit, the tags the service adds and a cleared result, fits
 * DynamoDB's 400 KB together with its replay-index entry (core/adapters/dynamodb/item-size.ts); a
 * limit 1,000 bytes larger would not. DynamoDB counts an item on a local secondary index together
 * with its index entry (the table keys, the index key, the projected attributes and, per AWS, 100
 * bytes). The same message against DynamoDB Local is in test/integration/message-size.test.ts;
 * DynamoDB Local counts less (it took 204,781 bytes of one string on the index), so only these
 * documented rules hold the limit.
 */
import { describe, expect, it } from "vitest";
import { ITEM_LIMIT_BYTES, isItemSizeError, itemBytes, storedBytes } from "../../core/adapters/dynamodb/item-size.js";
import { messageToItem } from "../../core/adapters/dynamodb/items.js";
import { MAX_MESSAGE_BYTES, MAX_TAGS, MAX_TAG_CHARS, messageBytes } from "../../core/domain/fields.js";
import type { Message } from "../../core/domain/model.js";
import { worstCaseMessage } from "../support/message-size.js";

const key = { tenantId: "t".repeat(128), processId: "p".repeat(128) };

describe("the message limit", () => {
  it("counts UTF-8 bytes of content, tags, toolCallId and every tool call's id, name and arguments", () => {
    expect(messageBytes({ content: "aé中😀" })).toBe(1 + 2 + 3 + 4);
    expect(messageBytes({ content: "x", tags: ["ab", "中"], toolCallId: "c1" })).toBe(1 + 2 + 3 + 2);
    expect(messageBytes({ content: "", toolCalls: [{ id: "i", name: "nm", arguments: '{"a":1}' }] })).toBe(1 + 2 + 7);
  });

  it("is the largest limit at which a worst-case message fits DynamoDB's 400 KB with its index entry", () => {
    const atLimit = worstCaseMessage(key, MAX_MESSAGE_BYTES);
    // The caller's bytes (the service's own two tags are not the caller's).
    expect(messageBytes({ ...atLimit, tags: atLimit.tags.slice(0, MAX_TAGS) })).toBe(MAX_MESSAGE_BYTES);
    expect(atLimit.toolCalls).toHaveLength(128);
    expect(storedBytes(messageToItem(key, atLimit))).toBeLessThanOrEqual(ITEM_LIMIT_BYTES);
    const larger = worstCaseMessage(key, MAX_MESSAGE_BYTES + 1000);
    expect(storedBytes(messageToItem(key, larger))).toBeGreaterThan(ITEM_LIMIT_BYTES);
  });

  it("an archived message is off the replay index and counts once", () => {
    const m: Message = { ...worstCaseMessage(key, MAX_MESSAGE_BYTES), archivedInMemoryId: "mem_01" };
    const item = messageToItem(key, m);
    expect(item.lsi1sk).toBeUndefined();
    expect(storedBytes(item)).toBe(itemBytes(item));
    expect(storedBytes(item)).toBeLessThan(ITEM_LIMIT_BYTES / 2 + 20_000);
  });

  it("counts sizes by DynamoDB's rules: names, UTF-8 strings, numbers, lists and maps", () => {
    expect(itemBytes({ pk: "p", content: "é" })).toBe(2 + 1 + 7 + 2);
    expect(itemBytes({ n: 123456 })).toBe(1 + 4);
    expect(itemBytes({ tags: ["ab", "c"] })).toBe(4 + 3 + (1 + 2) + (1 + 1));
    expect(itemBytes({ m: { id: "i" } })).toBe(1 + 3 + 1 + 2 + 1);
    expect(MAX_TAG_CHARS).toBe(128);
  });

  it("recognises DynamoDB's item-size refusals, and nothing else", () => {
    const err = (name: string, message: string) => Object.assign(new Error(message), { name });
    expect(isItemSizeError(err("ValidationException", "Item size has exceeded the maximum allowed size"))).toBe(true);
    expect(isItemSizeError(err("ValidationException", "Item size to update has exceeded the maximum allowed size"))).toBe(true);
    expect(isItemSizeError(err("ValidationException", "The provided key element does not match the schema"))).toBe(false);
    expect(isItemSizeError(err("ConditionalCheckFailedException", "Item size has exceeded the maximum allowed size"))).toBe(false);
  });
});
