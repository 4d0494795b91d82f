/** Outgoing domain events (EventBridge in AWS, an in-process bus locally). */
export interface DomainEvent {
  source: string;
  detailType: string;
  detail: Record<string, unknown>;
}

export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}
