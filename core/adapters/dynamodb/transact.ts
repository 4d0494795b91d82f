/**
 * Sending a TransactWriteItems built from named parts. DynamoDB cancels a transaction that touches
 * an item another transaction is writing at the same moment (TransactionConflict: an append and a
 * compaction commit both touch META); the SDK does not retry those, so this does, with the
 * adapters' backoff. A failed condition is an answer, never retried. An item DynamoDB refuses for
 * its size is the store's `store.item_too_large` (item-size.ts), never a raw ValidationException.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { backoff, type BackoffOptions, type BackoffPolicy } from "../backoff.js";
import type { Part } from "./conditions.js";
import { sizeChecked } from "./item-size.js";

/** DynamoDB's limit of items in one TransactWriteItems call. */
export const TRANSACTION_LIMIT = 100;
const TRANSACTION_ATTEMPTS = 5;
const TRANSACTION_BACKOFF: BackoffPolicy = { baseMs: 20, capMs: 500 };

/** The TransactWriteItems input of named parts, in their order (pure). */
export const transactionInput = (parts: readonly Part<string>[]): TransactWriteCommandInput => ({
  TransactItems: parts.map(([, write]) => write),
});

/** Cancelled only because another transaction held an item: worth another try. */
function isTransactionConflict(e: unknown): boolean {
  if (!(e instanceof TransactionCanceledException)) return false;
  const reasons = e.CancellationReasons ?? [];
  return reasons.some((r) => r.Code === "TransactionConflict") && !reasons.some((r) => r.Code === "ConditionalCheckFailed");
}

export function createTransactor(client: DynamoDBDocumentClient, options: BackoffOptions = {}) {
  const pause = backoff(TRANSACTION_BACKOFF, options);
  const send = async (parts: readonly Part<string>[]): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.send(new TransactWriteCommand(transactionInput(parts)));
        return;
      } catch (e) {
        if (!isTransactionConflict(e) || attempt >= TRANSACTION_ATTEMPTS) throw e;
        await pause(attempt);
      }
    }
  };
  return function sendTransaction(parts: readonly Part<string>[]): Promise<void> {
    return sizeChecked(`an item of the transaction (${[...new Set(parts.map(([name]) => name))].join(", ")})`, () => send(parts));
  };
}
export type SendTransaction = ReturnType<typeof createTransactor>;
