/** What every aggregate module of the DynamoDB store shares: the client, the table and the transactor. */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { BackoffOptions } from "../backoff.js";
import type { SendTransaction } from "./transact.js";

export interface StoreContext {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Waits between retries of throttled or conflicting work. */
  retry: BackoffOptions;
  sendTransaction: SendTransaction;
  /**
   * Items per TransactWriteItems call: DynamoDB's 100, smaller only where a test wants a roll-forward
   * on a short history (the interleaving checker).
   */
  transactionLimit: number;
}

/** Runs `fn` over `items`, `size` at a time. */
export async function inBatches<T>(items: readonly T[], size: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map(fn));
  }
}
