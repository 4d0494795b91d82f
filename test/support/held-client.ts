/**
 * A DynamoDB document client whose first matching request waits until the test releases it: a
 * slow writer, frozen at a chosen point of the protocol, without a clock. Built on the
 * interleaving checker's held client, which holds every call; all others are released at once.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createHeldClient } from "../../tools/interleavings/held-client.js";

/** The request kind, as the command's class names it (`TransactWriteCommand`, `UpdateCommand`, ...). */
export const commandName = (command: unknown) => (command as object).constructor.name;

export function heldClient(inner: DynamoDBDocumentClient, shouldHold: (command: unknown) => boolean) {
  let holding = true;
  let reached!: () => void;
  let open!: () => void;
  const held = new Promise<void>((r) => (reached = r));
  const opened = new Promise<void>((r) => (open = r));
  const client = createHeldClient(inner, (call) => {
    if (holding && shouldHold(call.command)) {
      holding = false;
      reached();
      void opened.then(() => call.release());
    } else {
      void call.release();
    }
  });
  /** `held` resolves once the matching request is waiting; `release()` lets it through. */
  return { client, held, release: () => open() };
}
