/**
 * Hands `CompactionRequested` and `ProcessEraseRequested` to the compaction worker Lambda by an asynchronous invoke (Lambda
 * queues it, retries a failed run twice, then parks it in the dead-letter queue); every other
 * event goes to `next`. The payload has the shape of an EventBridge event, so the worker reads
 * `detail` whichever way it was reached (docs/compaction.md, "The worker").
 */
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { EVENTS } from "../../domain/events.js";
import type { DomainEvent, EventPublisher } from "../../ports/events.js";

const WORKER_EVENTS: ReadonlySet<string> = new Set([EVENTS.CompactionRequested.detailType, EVENTS.ProcessEraseRequested.detailType]);

export interface LambdaInvoker {
  send(command: InvokeCommand): Promise<{ StatusCode?: number; FunctionError?: string }>;
}

export interface WorkerInvokerOptions {
  functionName: string;
  next: EventPublisher;
  client?: LambdaInvoker;
  /** Wraps the default client (tracing). */
  capture?: <C extends object>(client: C) => C;
}

export function createWorkerInvoker(options: WorkerInvokerOptions): EventPublisher {
  let client = options.client;
  return {
    async publish(event: DomainEvent) {
      if (!WORKER_EVENTS.has(event.detailType)) return options.next.publish(event);
      client ??= (options.capture ?? ((c) => c))(new LambdaClient({}));
      const out = await client.send(
        new InvokeCommand({
          FunctionName: options.functionName,
          InvocationType: "Event",
          Payload: new TextEncoder().encode(JSON.stringify({ source: event.source, "detail-type": event.detailType, detail: event.detail })),
        }),
      );
      // An accepted asynchronous invoke answers 202.
      if (out.StatusCode !== 202) throw new Error(`compaction worker invoke answered ${out.StatusCode ?? "nothing"}`);
    },
  };
}
