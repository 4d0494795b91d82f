/**
 * The message port over the message items and the replay read of the sparse index (inputs in
 * message-params.ts).
 */
import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Memory, Message } from "../../domain/model.js";
import type { MessageStore, ProcessKey } from "../../ports/store.js";
import { conditionHolds, failedItem, failedParts, isConditionFailure } from "./conditions.js";
import { WRITE_CONCURRENCY } from "../../ports/store.js";
import { inBatches, type StoreContext } from "./context.js";
import {
  IdempotencyItem,
  MessageItem,
  type MetaItem,
  isPendingFold,
  parseItem,
  readItem,
  toMemory,
  toMessage,
  toState,
} from "./items.js";
import {
  activeViewParams,
  appendMessageParts,
  archiveUpdate,
  clearUpdate,
  getMessageParams,
  listMessagesParams,
  messageKey,
  restoreUpdate,
  retagUpdate,
  updateTagsParts,
} from "./message-params.js";
import { isItemSizeError, sizeChecked } from "./item-size.js";
import { batchGetAll, encodeCursor, queryAll } from "./paging.js";
import { addMetaMap, readMeta } from "./process-store.js";
import { archiveIntoOk } from "./roll-forward.js";

/** Why a conditional tag write failed, from the message as the condition saw it. */
const tagsConflict = (old: MessageItem | null) => (old === null ? "not_found" : old.archivedInMemoryId !== undefined ? "archived" : "tags_changed");

const byId = (a: Message, b: Message) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createMessageStore(ctx: StoreContext): MessageStore {
  const { client, tableName, sendTransaction } = ctx;

  async function getMessage(key: ProcessKey, id: string): Promise<Message | null> {
    const out = await client.send(new GetCommand(getMessageParams(tableName, key, id)));
    return out.Item ? toMessage(readItem(MessageItem, out.Item)) : null;
  }

  async function append(
    ...[key, message, idempotencyKey, bodyHash, lastTurn, mayAddMap = true]: [...Parameters<MessageStore["appendMessage"]>, boolean?]
  ): ReturnType<MessageStore["appendMessage"]> {
    const parts = appendMessageParts(tableName, key, message, idempotencyKey, bodyHash, lastTurn);
    try {
      await sendTransaction(parts);
      return { ok: true, message, created: true };
    } catch (e) {
      const failed = failedParts(e, parts);
      if (!failed) throw e;
      if (failed.process) {
        // Or a META written before its map (conditions.ts): the map, then the append once more.
        return lastTurn && mayAddMap && (await addMetaMap(ctx, key)) ? append(key, message, idempotencyKey, bodyHash, lastTurn, false) : { ok: false, reason: "process_not_found" };
      }
      if (failed.idempotency?.item) {
        const existing = readItem(IdempotencyItem, failed.idempotency.item);
        // A record written before hashes were kept matches any body.
        if (bodyHash && existing.bodyHash && existing.bodyHash !== bodyHash) return { ok: false, reason: "idempotency_key_reused" };
        const first = await getMessage(key, existing.messageId);
        if (first) return { ok: true, message: first, created: false };
      }
      throw e;
    }
  }

  return {
    async hasUserMessage(key) {
      return (await readMeta(ctx, key))?.firstUserMessageId !== undefined;
    },

    appendMessage: append,

    async listMessages(key, options) {
      const out = await client.send(new QueryCommand(listMessagesParams(tableName, key, options)));
      return {
        items: (out.Items ?? []).map((i) => toMessage(readItem(MessageItem, i))),
        nextCursor: encodeCursor(out.LastEvaluatedKey),
      };
    },

    async getMessages(key, ids) {
      const keys = [...new Set(ids)].map((id) => messageKey(key, id));
      const items = await batchGetAll(client, tableName, keys, ctx.retry);
      return items.map((i) => toMessage(readItem(MessageItem, i))).sort(byId);
    },

    getMessage,

    async updateMessageTags(key, messageId, change) {
      const parts = updateTagsParts(tableName, key, messageId, change);
      try {
        await sendTransaction(parts);
        return { ok: true };
      } catch (e) {
        const failed = failedParts(e, parts);
        if (!failed) throw e;
        if (failed.message) return { ok: false, reason: tagsConflict(failed.message.item ? readItem(MessageItem, failed.message.item) : null) };
        if (failed.process) {
          // No META, or a deleted process's tombstone: not found; otherwise a roll-forward is unfinished.
          const meta = failed.process.item;
          return { ok: false, reason: meta && meta.deletedAt === undefined ? "pending_archive" : "not_found" };
        }
        throw e;
      }
    },

    async retagMessage(key, messageId, change) {
      try {
        await sizeChecked(`message '${messageId}' with its new tags`, () => client.send(new UpdateCommand(retagUpdate(tableName, key, messageId, change))));
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: tagsConflict(failedItem(e, MessageItem)) };
      }
    },

    async activeView(key) {
      const { items, consumed } = await queryAll(client, activeViewParams(tableName, key));
      let meta: MetaItem | undefined;
      const summaries: Memory[] = [];
      const folds: Memory[] = [];
      const messages: Message[] = [];
      for (const raw of items) {
        const parsed = parseItem(raw);
        if (parsed.type === "META") meta = parsed.item;
        else if (parsed.type === "MSG") messages.push(toMessage(parsed.item));
        else if (isPendingFold(parsed.item)) folds.push(toMemory(parsed.item));
        else summaries.push(toMemory(parsed.item));
      }
      if (!meta) return null;
      return { state: toState(meta), summaries, folds, messages, consumedCapacity: consumed, itemsRead: items.length };
    },

    markArchived: (key, ids, memoryId, expiresAtEpoch) => archiveIntoOk(ctx, key, ids, memoryId, new Date().toISOString(), expiresAtEpoch),

    async markCleared(key, items) {
      const cleared: string[] = [];
      const skipped: string[] = [];
      await inBatches(items, WRITE_CONCURRENCY, async (item) => {
        const applied = await conditionHolds(() => client.send(new UpdateCommand(clearUpdate(tableName, key, item)))).catch((e: unknown) => {
          // A result too large to take its placeholder fields stays in the replay, uncleared.
          if (isItemSizeError(e)) return false;
          throw e;
        });
        (applied ? cleared : skipped).push(item.id);
      });
      return { cleared, skipped };
    },
  };
}
