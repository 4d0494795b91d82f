/**
 * The redrive of the stage's dead-letter queue (docs/operations.md, "Redrive"): each message names
 * the function its event failed in and carries the event as that function got it; redriving hands
 * the event back to that function, then deletes the message. The functions are safe to run twice
 * (a CompactionRequested only works on a fold still QUEUED), so a redriven event is handled once
 * even when it also arrives some other way.
 *
 * Two producers write to the queue, in two shapes: Lambda's asynchronous invocation records
 * (`onFailure`: `requestContext.functionArn`, `requestPayload`) and EventBridge's undeliverable
 * events (the event itself, the target in the `TARGET_ARN` attribute).
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { LambdaInvoker } from "./worker-invoker.js";
import { InvokeCommand } from "@aws-sdk/client-lambda";

/** One message as the queue holds it. */
export interface QueuedLetter {
  /** What deletes it (SQS's receipt handle). */
  receipt: string;
  body: string;
  /** String message attributes (EventBridge's TARGET_ARN, ERROR_CODE, …). */
  attributes: Readonly<Record<string, string>>;
}

export interface DeadLetterQueue {
  /** Up to `max` (at most 10) messages, hidden from other readers while this run handles them. */
  receive(max: number): Promise<QueuedLetter[]>;
  remove(letter: QueuedLetter): Promise<void>;
  /** Shows a received message to readers again (one this run keeps, or only listed). */
  release(letter: QueuedLetter): Promise<void>;
}

/** A message read: the function the event failed in, and the event. */
export type DeadLetter = { target: string; event: unknown; error?: string } | { unreadable: string };

const record = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Reads one message of either producer; anything else is unreadable, with the reason. */
export function readDeadLetter(letter: Pick<QueuedLetter, "body" | "attributes">): DeadLetter {
  let body: unknown;
  try {
    body = JSON.parse(letter.body);
  } catch {
    return { unreadable: "the body is not JSON" };
  }
  const invocation = record(record(body)?.requestContext);
  if (invocation && typeof invocation.functionArn === "string" && "requestPayload" in record(body)!) {
    const response = record(record(body)!.responsePayload);
    const error = typeof response?.errorMessage === "string" ? response.errorMessage : String(invocation.condition ?? "");
    return { target: invocation.functionArn, event: record(body)!.requestPayload, ...(error ? { error } : {}) };
  }
  const target = letter.attributes.TARGET_ARN;
  if (target && record(body)) return { target, event: body, ...(letter.attributes.ERROR_MESSAGE ? { error: letter.attributes.ERROR_MESSAGE } : {}) };
  return { unreadable: "neither a Lambda invocation record nor an EventBridge event with TARGET_ARN" };
}

export interface RedriveOptions {
  queue: DeadLetterQueue;
  /** Hands an event back to the function it failed in. */
  redeliver: (target: string, event: unknown) => Promise<void>;
  /** At most this many messages are moved. */
  max: number;
  /** Only these targets are redriven; the rest stay in the queue (a queue of another stage's functions, say). */
  allowTarget?: (target: string) => boolean;
  /** List what would move; move and delete nothing. */
  dryRun?: boolean;
  /** One line per message. */
  report?: (line: string) => void;
}

export interface RedriveResult {
  /** Redelivered and deleted (or, in a dry run, that would be). */
  moved: number;
  /** Left in the queue: unreadable, or for a target not allowed. */
  kept: number;
}

/**
 * Moves up to `max` messages back to their functions. A message leaves the queue only after its
 * function accepted the event again. The ones kept (and, in a dry run, all) stay hidden while the
 * run reads on, so it never reads one twice, and are shown again when it ends.
 */
export async function redriveDeadLetters(options: RedriveOptions): Promise<RedriveResult> {
  const result: RedriveResult = { moved: 0, kept: 0 };
  const held: QueuedLetter[] = [];
  try {
    await redriveInto(options, result, held);
  } finally {
    for (const letter of held) await options.queue.release(letter);
  }
  return result;
}

/**
 * Text from a letter as a terminal may show it: control characters (an escape sequence that
 * clears the screen or retitles the window) as `\uXXXX`.
 */
export const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

async function redriveInto(options: RedriveOptions, result: RedriveResult, held: QueuedLetter[]): Promise<void> {
  const report = options.report ? (line: string) => options.report!(printable(line)) : () => {};
  while (result.moved + result.kept < options.max) {
    const letters = await options.queue.receive(Math.min(10, options.max - result.moved - result.kept));
    if (letters.length === 0) break;
    for (const letter of letters) {
      const read = readDeadLetter(letter);
      if ("unreadable" in read) {
        held.push(letter);
        result.kept++;
        report(`kept (unreadable: ${read.unreadable}): ${letter.body.slice(0, 200)}`);
        continue;
      }
      const detailType = record(read.event)?.["detail-type"] ?? "event";
      if (options.allowTarget && !options.allowTarget(read.target)) {
        held.push(letter);
        result.kept++;
        report(`kept (${read.target} is not a function of this stage): ${String(detailType)}`);
        continue;
      }
      if (options.dryRun) held.push(letter);
      else {
        await options.redeliver(read.target, read.event);
        await options.queue.remove(letter);
      }
      result.moved++;
      report(`${options.dryRun ? "would redrive" : "redriven"} ${String(detailType)} -> ${read.target}${read.error ? ` (failed with: ${read.error.slice(0, 200)})` : ""}`);
    }
  }
}

/** The stage's queue through SQS. Messages are hidden for `visibilitySeconds` once received. */
export function createSqsDeadLetterQueue(options: { client: Pick<SQSClient, "send">; queueUrl: string; visibilitySeconds?: number }): DeadLetterQueue {
  const { client, queueUrl } = options;
  return {
    async receive(max) {
      const out = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, max),
          MessageAttributeNames: ["All"],
          VisibilityTimeout: options.visibilitySeconds ?? 300,
          // A short long-poll: an almost empty queue still answers with what it holds.
          WaitTimeSeconds: 1,
        }),
      );
      return (out.Messages ?? []).map((m) => ({
        receipt: m.ReceiptHandle ?? "",
        body: m.Body ?? "",
        attributes: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).flatMap(([k, v]) => (v.StringValue ? [[k, v.StringValue]] : []))),
      }));
    },
    async remove(letter) {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: letter.receipt }));
    },
    async release(letter) {
      await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: letter.receipt, VisibilityTimeout: 0 }));
    },
  };
}

/** Redelivery by an asynchronous invoke, as Lambda and EventBridge delivered the event the first time. */
export function lambdaRedelivery(client: LambdaInvoker): RedriveOptions["redeliver"] {
  return async (target, event) => {
    const out = await client.send(new InvokeCommand({ FunctionName: target, InvocationType: "Event", Payload: new TextEncoder().encode(JSON.stringify(event)) }));
    if (out.StatusCode !== 202) throw new Error(`invoke of ${target} answered ${out.StatusCode ?? "nothing"}`);
  };
}
