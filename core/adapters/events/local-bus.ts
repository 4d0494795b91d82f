/**
 * An in-process event bus for the local runner and tests: it records the newest events published
 * (for `GET /local/events`) and delivers matching events to subscribers asynchronously, at least
 * once, the way EventBridge rules reach Lambda targets: a handler that fails gets the event again.
 */
import type { DomainEvent, EventPublisher } from "../../ports/events.js";
import type { Log } from "../../ports/logger.js";

export interface RecordedEvent extends DomainEvent {
  time: string;
}

/** An event as subscribers get it: `account` names who put it from outside (EventBridge's `account`); unset for the service's own. */
export interface BusEvent extends DomainEvent {
  account?: string;
}

export type EventHandler = (event: BusEvent) => Promise<void>;

/** How many published events the bus keeps by default: a long-running `npm start` holds no more. */
export const DEFAULT_MAX_RECORDED = 1_000;

export interface LocalBus extends EventPublisher {
  /** The newest events this service published (at most `maxRecorded`), oldest first. */
  published(): RecordedEvent[];
  subscribe(match: { source: string; detailType: string }, handler: EventHandler): void;
  /** Delivers an event from outside (PutEvents) to the subscribers, without recording it. */
  deliver(event: BusEvent): Promise<void>;
  /** Resolves when every delivery started so far has finished (tests). */
  drain(): Promise<void>;
}

export interface LocalBusOptions {
  /**
   * Waits before redelivering to a handler that failed, one per retry (Lambda's asynchronous
   * invocation retries a failed event twice). Default: 1 s, then 5 s.
   */
  retryDelaysMs?: readonly number[];
  /** Published events kept for `published()`; older ones are forgotten. Default DEFAULT_MAX_RECORDED. */
  maxRecorded?: number;
  /**
   * Gets each event a handler failed on every retry, as the stage's dead-letter queue does
   * (docs/operations.md, "Redrive"); without it the event is logged and dropped.
   */
  deadLetter?: (event: BusEvent, error: unknown) => void;
}

export function createLocalBus(log?: Log, options: LocalBusOptions = {}): LocalBus {
  const records: RecordedEvent[] = [];
  const subscribers: Array<{ source: string; detailType: string; handler: EventHandler }> = [];
  const inFlight = new Set<Promise<void>>();
  const delays = options.retryDelaysMs ?? [1_000, 5_000];
  const maxRecorded = options.maxRecorded ?? DEFAULT_MAX_RECORDED;

  const deliverWithRetries = async (handler: EventHandler, event: BusEvent) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await handler(event);
      } catch (e) {
        log?.error("event handler failed", { detailType: event.detailType, attempt: attempt + 1, error: String(e) });
        if (attempt >= delays.length) return options.deadLetter?.(event, e);
        await new Promise((r) => setTimeout(r, delays[attempt]));
      }
    }
  };

  const dispatch = (event: BusEvent) => {
    for (const s of subscribers) {
      if (s.source !== event.source || s.detailType !== event.detailType) continue;
      const p = Promise.resolve()
        .then(() => deliverWithRetries(s.handler, event))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  };

  return {
    async publish(event) {
      records.push({ ...event, time: new Date().toISOString() });
      if (records.length > maxRecorded) records.splice(0, records.length - maxRecorded);
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
