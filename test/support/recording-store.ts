/**
 * Hand-written recorders for counting round trips: a Store proxy that records (and can fail) port
 * calls, and a wrapper around the document client's `send` that records every DynamoDB command.
 * Both pass through to the real DynamoDB Local table; nothing is mocked.
 */
import { randomUUID } from "node:crypto";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { Store } from "../../core/ports/store.js";
import { dynamoEndpoint } from "./dynamo.js";
import { startTestService } from "./service.js";

export interface StoreCall {
  method: keyof Store;
  /** The processId of a ProcessKey first argument, when there is one. */
  processId?: string;
  args: unknown[];
}

export interface RecordingStore {
  store: Store;
  calls: StoreCall[];
  /** Return an error to make that call reject with it (e.g. "the store is down"). */
  fail: (call: StoreCall) => Error | undefined;
  reset(): void;
  /** Calls that touched `processId`. */
  callsFor(processId: string): StoreCall[];
}

const processIdOf = (arg: unknown): string | undefined =>
  typeof arg === "object" && arg !== null && typeof (arg as { processId?: unknown }).processId === "string"
    ? (arg as { processId: string }).processId
    : undefined;

export function createRecordingStore(inner: Store): RecordingStore {
  const recording: RecordingStore = {
    calls: [],
    fail: () => undefined,
    reset() {
      recording.calls.length = 0;
      recording.fail = () => undefined;
    },
    callsFor: (processId) => recording.calls.filter((c) => c.processId === processId),
    store: new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const processId = processIdOf(args[0]);
          const call: StoreCall = { method: prop as keyof Store, args, ...(processId ? { processId } : {}) };
          recording.calls.push(call);
          const error = recording.fail(call);
          if (error) throw error;
          return value.apply(target, args);
        };
      },
    }),
  };
  return recording;
}

export interface CommandRecord {
  name: string;
  /** `ConsistentRead` of a read command, when set. */
  consistent?: boolean;
}

/** Records every command sent through `client` (name and read consistency), then sends it. */
export function countCommands(client: DynamoDBDocumentClient) {
  const commands: CommandRecord[] = [];
  const send = client.send.bind(client) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  (client as { send: unknown }).send = (command: { constructor: { name: string }; input?: { ConsistentRead?: boolean } }, ...rest: unknown[]) => {
    const consistent = command.input?.ConsistentRead;
    commands.push({ name: command.constructor.name, ...(consistent !== undefined ? { consistent } : {}) });
    return send(command, ...rest);
  };
  return {
    commands,
    names: () => commands.map((c) => c.name),
    reset: () => void (commands.length = 0),
  };
}

/**
 * The local runner over a fresh table whose store is recorded at both levels: Store port calls
 * (`recording`) and DynamoDB commands (`dynamo`).
 */
export async function startRecordedService(options: Parameters<typeof startTestService>[0] = {}) {
  const tableName = `rec-${randomUUID().slice(0, 8)}`;
  const client = createDocumentClient({ endpoint: dynamoEndpoint() });
  const dynamo = countCommands(client);
  const recording = createRecordingStore(createDynamoStore({ client, tableName }));
  const ctx = await startTestService({
    ...options,
    tableName,
    overrides: { ...options.overrides, store: recording.store },
  });
  return { ...ctx, recording, dynamo };
}
