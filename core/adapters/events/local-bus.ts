/**
 * An in-process event bus for the local runner and tests: it records what was published (for
 * `GET /local/events`) and delivers matching events to subscribers asynchronously, at least once,
 * the way EventBridge rules reach Lambda targets.
 */
import type { DomainEvent, EventPublisher } from "../../ports/events.js";
import type { Log } from "../../ports/logger.js";

export interface RecordedEvent extends DomainEvent {
  time: string;
}

export type EventHandler = (event: DomainEvent) => Promise<void>;

export interface LocalBus extends EventPublisher {
  /** Events this service published, oldest first. */
  published(): RecordedEvent[];
  subscribe(match: { source: string; detailType: string }, handler: EventHandler): void;
  /** Delivers an event from outside (PutEvents) to the subscribers, without recording it. */
  deliver(event: DomainEvent): Promise<void>;
  /** Resolves when every delivery started so far has finished (tests). */
  drain(): Promise<void>;
}

export function createLocalBus(log?: Log): LocalBus {
  const records: RecordedEvent[] = [];
  const subscribers: Array<{ source: string; detailType: string; handler: EventHandler }> = [];
  const inFlight = new Set<Promise<void>>();

  const dispatch = (event: DomainEvent) => {
    for (const s of subscribers) {
      if (s.source !== event.source || s.detailType !== event.detailType) continue;
      const p = Promise.resolve()
        .then(() => s.handler(event))
        .catch((e) => log?.error("event handler failed", { detailType: event.detailType, error: String(e) }))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  };

  return {
    async publish(event) {
      records.push({ ...event, time: new Date().toISOString() });
      dispatch(event);
    },
    published: () => [...records],
    subscribe(match, handler) {
      subscribers.push({ ...match, handler });
    },
    async deliver(event) {
      dispatch(event);
    },
    async drain() {
      while (inFlight.size) await Promise.all([...inFlight]);
    },
  };
}
