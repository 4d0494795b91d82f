/**
 * The Store port over one DynamoDB table (layout in table.ts and keys.ts), one module per
 * aggregate: processes and settings, messages and the replay read, memories and folds, the commit
 * protocol, the inbox, model usage. Each builds its DynamoDB inputs with the pure functions of its `*-params.ts`
 * file. Expected conflicts of conditional writes come back as `{ ok: false, reason }`; anything
 * else is rethrown.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { ErasureStore, ImportingStore, Store } from "../../ports/store.js";
import type { BackoffOptions } from "../backoff.js";
import { createCompactionStore } from "./compaction-store.js";
import type { StoreContext } from "./context.js";
import { createErasureStore } from "./erasure-store.js";
import { createImportStore } from "./import-store.js";
import { createInboxStore } from "./inbox-store.js";
import { createMemoryStore } from "./memory-store.js";
import { createMessageStore } from "./message-store.js";
import { createProcessStore } from "./process-store.js";
import { createTransactor, TRANSACTION_LIMIT } from "./transact.js";
import { createUsageStore } from "./usage-store.js";

export { memoryToItem, messageToItem } from "./items.js";
export { TRANSACTION_LIMIT } from "./transact.js";
export { BATCH_GET_ATTEMPTS } from "./paging.js";

export interface DynamoStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Waits between retries of throttled or conflicting work (tests pass their own to observe them). */
  retry?: BackoffOptions;
  /** Items per transaction (default DynamoDB's {@link TRANSACTION_LIMIT}); smaller only in tests. */
  transactionLimit?: number;
}

/**
 * The whole Store over one table. A service that needs less can be handed the same object typed
 * as one of the aggregate ports (`MessageStore`, `SettingsStore`, ...).
 *
 * @example
 * const client = createDocumentClient({ endpoint: "http://127.0.0.1:8000" });
 * await createTable(client, "memory");
 * const store = createDynamoStore({ client, tableName: "memory" });
 * await store.upsertProcess("acme", { processId: "p-1", projectId: "demo" }, new Date().toISOString());
 * const view = await store.activeView({ tenantId: "acme", processId: "p-1" }); // META, summary, messages
 */
export function createDynamoStore(options: DynamoStoreOptions): ImportingStore {
  const ctx = contextOf(options);
  return { ...serviceStore(ctx), ...createErasureStore(ctx), ...createImportStore(ctx) };
}

/**
 * The Store for the functions that never import nor delete (the plain routes): the import port
 * and the erasure's code stay out of their bundle (docs/benchmarks.md, "Cold start"); an erasure
 * method called on it is an internal error naming what is missing.
 */
export const createServiceStore = (options: DynamoStoreOptions): Store => ({ ...serviceStore(contextOf(options)), ...NO_ERASURE });

/** Every method of the erasure port (a record, so that the compiler finds one left out). */
const ERASURE_METHODS: Record<keyof ErasureStore, true> = {
  markDeleted: true,
  eraseItems: true,
  finishDeletion: true,
  eraseTenantRecords: true,
  markTenantErased: true,
  listUnlistedProcesses: true,
  tenantLeftovers: true,
};
const NO_ERASURE = Object.fromEntries(
  Object.keys(ERASURE_METHODS).map((m) => [
    m,
    () => {
      throw new Error(`this function's store has no erasure port (${m})`);
    },
  ]),
) as unknown as ErasureStore;

function contextOf({ client, tableName, retry = {}, transactionLimit = TRANSACTION_LIMIT }: DynamoStoreOptions): StoreContext {
  return { client, tableName, retry, sendTransaction: createTransactor(client, retry), transactionLimit };
}

function serviceStore(ctx: StoreContext): Omit<Store, keyof ErasureStore> {
  return {
    ...createProcessStore(ctx),
    ...createMessageStore(ctx),
    ...createMemoryStore(ctx),
    ...createCompactionStore(ctx),
    ...createInboxStore(ctx),
    ...createUsageStore(ctx),
  };
}
