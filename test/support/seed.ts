/**
 * Writes messages straight to the table with BatchWriteItem (25 per request), through the store's
 * own item mapping: appending hundreds or thousands of messages one by one would dominate a test.
 * The process must already exist.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createUlidIds } from "../../core/adapters/ids.js";
import { messageToItem } from "../../core/adapters/dynamodb/store.js";
import type { Message, Role } from "../../core/domain/model.js";
import { messageTokens } from "../../core/domain/tokens.js";
import type { ProcessKey } from "../../core/ports/store.js";

export interface SeedSpec {
  role: Role;
  content: string;
  tags?: string[];
}

/** `n` messages in creation order (ULID ids), built from `make`; `at(i)` sets each creation time. */
export function draftMessages(
  key: ProcessKey,
  n: number,
  make: (i: number) => SeedSpec,
  at: (i: number) => Date = () => new Date(),
): Message[] {
  const ids = createUlidIds();
  return Array.from({ length: n }, (_, i) => {
    const when = at(i);
    const { role, content, tags = [] } = make(i);
    const draft = { id: ids.message(when), processId: key.processId, role, content, tags, createdAt: when.toISOString(), archivedInMemoryId: null };
    return { ...draft, tokens: messageTokens(draft) };
  });
}

/** Puts `messages` with a few BatchWrite requests in flight, retrying unprocessed items. */
export async function writeMessages(client: DynamoDBDocumentClient, tableName: string, key: ProcessKey, messages: Message[]) {
  const batches: Message[][] = [];
  for (let i = 0; i < messages.length; i += 25) batches.push(messages.slice(i, i + 25));
  const worker = async () => {
    for (let batch = batches.shift(); batch; batch = batches.shift()) {
      let request: Record<string, unknown[]> | undefined = {
        [tableName]: batch.map((m) => ({ PutRequest: { Item: messageToItem(key, m) } })),
      };
      while (request && Object.keys(request).length) {
        const out = await client.send(new BatchWriteCommand({ RequestItems: request as never }));
        request = out.UnprocessedItems as typeof request;
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

/** `n` imported-looking messages, the last one USER (so it is the triggering turn), written at once. */
export async function seedImported(client: DynamoDBDocumentClient, tableName: string, key: ProcessKey, n: number): Promise<Message[]> {
  const messages = draftMessages(key, n, (i) => ({
    role: i === n - 1 ? "USER" : "ASSISTANT",
    content: `fact ${i}: batch ${i} imported`,
  }));
  await writeMessages(client, tableName, key, messages);
  return messages;
}
