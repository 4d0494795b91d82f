/** Outgoing domain events (EventBridge in AWS, an in-process bus locally), and how the services publish them. */
import type { CatalogueEvent } from "../domain/events.js";
import type { Log } from "./logger.js";

export interface DomainEvent {
  source: string;
  detailType: string;
  detail: Record<string, unknown>;
}

export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}

/**
 * Publishes one of the service's own events (the catalogue: core/domain/events.ts). Events are
 * notifications: a publish failure is logged, it never undoes a committed compaction.
 */
export async function publishSafely(deps: { events: EventPublisher; log: Log }, event: CatalogueEvent) {
  try {
    await deps.events.publish(event);
  } catch (e) {
    deps.log.error("event publish failed", { detailType: event.detailType, error: String(e) });
  }
}
