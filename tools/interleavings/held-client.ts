/**
 * A DynamoDB document client whose every `send` waits until the scheduler releases it: the yield
 * points of the interleaving checker are the store's DynamoDB calls, so a port method that reads
 * and then writes (a roll-forward reads META and the memory, then archives) can be preempted in
 * the middle. Releasing a call sends it to the real client and hands its answer (or error) back.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

export interface HeldCall {
  /** The command's class name (`GetCommand`, `TransactWriteCommand`, ...). */
  name: string;
  command: { input?: unknown };
  /** Sends the call to DynamoDB and resolves once its caller has its answer (`ok`: DynamoDB did not refuse it). */
  release(): Promise<{ ok: boolean; error?: string }>;
}

/**
 * A client that holds each call and passes it to `hold`. It is an instance of the real client's
 * class (the SDK's paginators check that), sharing its connection and configuration.
 */
export function createHeldClient(real: DynamoDBDocumentClient, hold: (call: HeldCall) => void): DynamoDBDocumentClient {
  const held = Object.create(real) as DynamoDBDocumentClient;
  const send = (command: { constructor: { name: string }; input?: unknown }) =>
    new Promise<unknown>((resolve, reject) => {
      hold({
        name: command.constructor.name,
        command,
        async release() {
          try {
            resolve(await (real.send as (c: unknown) => Promise<unknown>)(command));
            return { ok: true };
          } catch (e) {
            reject(e);
            return { ok: false, error: e instanceof Error ? e.name : String(e) };
          }
        },
      });
    });
  Object.defineProperty(held, "send", { value: send });
  return held;
}
