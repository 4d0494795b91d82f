/** Publishes domain events to an EventBridge bus. */
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import type { DomainEvent, EventPublisher } from "../../ports/events.js";

export interface EventBridgePublisherOptions {
  busName: string;
  client?: EventBridgeClient;
  /** Wraps the default client (tracing). */
  capture?: <C extends object>(client: C) => C;
}

export function createEventBridgePublisher(options: EventBridgePublisherOptions): EventPublisher {
  const client = options.client ?? (options.capture ?? ((c) => c))(new EventBridgeClient({}));
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
