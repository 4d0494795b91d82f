/**
 * A DynamoDB document client whose first matching request waits until the test releases it: a
 * slow writer, frozen at a chosen point of the protocol, without a clock.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/** The request kind, as the command's class names it (`TransactWriteCommand`, `UpdateCommand`, ...). */
export const commandName = (command: unknown) => (command as object).constructor.name;

export function heldClient(inner: DynamoDBDocumentClient, shouldHold: (command: unknown) => boolean) {
  let holding = true;
  let reached!: () => void;
  let open!: () => void;
  const held = new Promise<void>((r) => (reached = r));
  const opened = new Promise<void>((r) => (open = r));
  const client = new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== "send") return Reflect.get(target, property, receiver);
      return async (command: never, ...rest: never[]) => {
        if (holding && shouldHold(command)) {
          holding = false;
          reached();
          await opened;
        }
        return target.send(command, ...rest);
      };
    },
  });
  /** `held` resolves once the matching request is waiting; `release()` lets it through. */
  return { client, held, release: () => open() };
}
