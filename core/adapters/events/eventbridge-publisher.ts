/** Publishes domain events to an EventBridge bus. */
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import type { DomainEvent, EventPublisher } from "../../ports/events.js";

export function createEventBridgePublisher(options: { busName: string; client?: EventBridgeClient }): EventPublisher {
  const client = options.client ?? new EventBridgeClient({});
  return {
    async publish(event: DomainEvent) {
      const out = await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: options.busName,
              Source: event.source,
              DetailType: event.detailType,
              Detail: JSON.stringify(event.detail),
            },
          ],
        }),
      );
      if (out.FailedEntryCount) {
        throw new Error(`PutEvents failed: ${out.Entries?.[0]?.ErrorCode} ${out.Entries?.[0]?.ErrorMessage}`);
      }
    },
  };
}
