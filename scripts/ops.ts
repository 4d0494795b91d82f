/**
 * `npm run ops -- redrive`: moves the stage's dead-letter queue back to the functions its events
 * failed in (docs/operations.md, "Redrive"), with the operator's AWS credentials.
 * `npm run ops -- sweep-blobs`: deletes the blobs of a process that no live message names
 * (docs/configuration.md, "Retention").
 *
 * @example
 * TABLE_NAME=team-a-vancetope-memory-table npm run ops -- sweep-blobs --tenant team-a --process chat-1 [--dry-run]
 * EVENTS_DLQ_URL=https://sqs.eu-west-1.amazonaws.com/123456789012/team-a-vancetope-memory-Events-EventsDlq… \
 *   npm run ops -- redrive --stage team-a --dry-run
 * npm run ops -- redrive --stage team-a --queue-url <EventsDlqUrl> --max 20
 */
import { parseArgs } from "node:util";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { SERVICE_NAME } from "../core/domain/service.js";
import {
  createSqsDeadLetterQueue,
  lambdaRedelivery,
  redriveDeadLetters,
  type DeadLetterQueue,
  type RedriveOptions,
} from "../core/adapters/events/dead-letters.js";
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import { silentLog } from "../core/adapters/log.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../core/composition/create-deps.js";
import { createBlobStore } from "../core/composition/local-blob-store.js";
import { createCachedBlobReader } from "../core/services/blob-reader.js";
import { AppError } from "../core/domain/errors.js";
import { Id } from "../core/domain/fields.js";
import type { BlobStore } from "../core/ports/blob-store.js";
import type { Store } from "../core/ports/store.js";
import { sweepBlobs } from "../core/services/blob-sweep.js";
import { runAsScript, TABLE_ENVIRONMENT, tableFrom, tenantArg, UsageError, withUsage } from "./cli.js";

/** The most messages one run moves: a larger backlog is redriven in several runs, each one checked. */
export const MAX_REDRIVE = 1_000;
export const DEFAULT_REDRIVE = 100;

export const USAGE = `usage:
  ops redrive --stage <stage> [--max N] [--dry-run]
  ops redrive --stage <stage> --queue-url <url> [--max N] [--dry-run]
      moves up to N (default ${DEFAULT_REDRIVE}, at most ${MAX_REDRIVE}) messages of the stage's dead-letter queue back to
      the functions they failed in (an asynchronous invoke with the original event), deleting each
      once its function accepted it; --dry-run lists them and moves nothing. The queue is found by
      its name, or named by --queue-url (or EVENTS_DLQ_URL); messages for functions outside the
      stage's stacks (names not starting '<stage>-vancetope-memory-', or in another account or
      region than the queue) stay in the queue. Printed text shows control characters as \\uXXXX.
environment: EVENTS_DLQ_URL (the stage's EventsDlqUrl stack output), AWS_REGION / AWS_PROFILE as usual
  ops sweep-blobs --tenant <tenantId> --process <processId> [--dry-run]
      deletes the process's blobs that no live message names (those of originals past their
      retention); a blob any kept message names stays. --dry-run lists them and deletes nothing.
      Run it on a process at rest.
${TABLE_ENVIRONMENT}`;

export interface OpsCliIo {
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
  /** Injected by tests; SQS and Lambda from the environment otherwise. */
  queue?: (queueUrl: string) => DeadLetterQueue;
  redeliver?: RedriveOptions["redeliver"];
  /** The URLs of the queues whose names start with a prefix (SQS ListQueues otherwise). */
  listQueues?: (prefix: string) => Promise<string[]>;
  /** Injected by tests; the stage's table (TABLE_NAME) otherwise. */
  store?: Store;
  /** The stage's blob store; sweep-blobs refuses to run without one. */
  blobs?: BlobStore;
}

/**
 * The name prefix of a stage's dead-letter queue: CloudFormation names it `<stack>-<logical id>-<random>`,
 * the stack being `<stage>-vancetope-memory-Events` and the logical id `EventsDlq<hash>` (stacks/events.ts).
 */
export const dlqNamePrefix = (stage: string) => `${stage}-${SERVICE_NAME}-Events-EventsDlq`;

async function listQueues(prefix: string): Promise<string[]> {
  const out = await new SQSClient({}).send(new ListQueuesCommand({ QueueNamePrefix: prefix }));
  return out.QueueUrls ?? [];
}

async function queueUrlOf(stage: string, list: (prefix: string) => Promise<string[]>): Promise<string> {
  const urls = await list(dlqNamePrefix(stage));
  if (urls.length !== 1) {
    throw new UsageError(`${urls.length} queues are named ${dlqNamePrefix(stage)}…; name the stage's queue with --queue-url (its EventsDlqUrl stack output)`);
  }
  return urls[0]!;
}

function maxArg(value: string | undefined): number {
  if (value === undefined) return DEFAULT_REDRIVE;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_REDRIVE) throw new UsageError(`--max must be a whole number from 1 to ${MAX_REDRIVE}, got '${value}'`);
  return n;
}

function stageArg(value: string | undefined): string {
  if (!value) throw new UsageError("--stage is required");
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(value)) throw new UsageError(`--stage '${value}' is not a stage name`);
  return value;
}

/**
 * Whether a target is a function of the stage's own stacks (named `<stage>-vancetope-memory-…`),
 * in the account and region of the stage's queue (`https://sqs.<region>.amazonaws.com/<account>/…`):
 * a letter anyone could send names its target, so nothing else is invoked.
 */
function stageFunction(stage: string, queueUrl: string): (target: string) => boolean {
  const queue = /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/(\d{12})\//.exec(queueUrl);
  return (target) => {
    const fn = /^arn:aws[a-z-]*:lambda:([a-z0-9-]+):(\d{12}):function:([^:]+)(?::[^:]+)?$/.exec(target);
    return !!queue && !!fn && fn[1] === queue[1] && fn[2] === queue[2] && fn[3]!.startsWith(`${stage}-${SERVICE_NAME}-`);
  };
}

/** Runs one command; resolves to the process exit code (0 ok, 1 some messages kept, 2 usage). */
export async function runOpsCli(argv: string[], io: OpsCliIo): Promise<number> {
  return withUsage(USAGE, io, async () => {
    const { positionals, values } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        stage: { type: "string" },
        "queue-url": { type: "string" },
        max: { type: "string" },
        "dry-run": { type: "boolean", default: false },
        tenant: { type: "string" },
        process: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    const command = positionals[0];
    if (values.help || !command) {
      io.out(USAGE);
      return values.help ? 0 : 2;
    }
    if (command !== "redrive" && command !== "sweep-blobs") throw new UsageError(`unknown command '${command}'`);
    if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
    if (command === "sweep-blobs") return sweep(io, { tenant: values.tenant, process: values.process, dryRun: values["dry-run"] });
    const named = values["queue-url"] ?? io.env.EVENTS_DLQ_URL;
    // Always a stage: a letter names its own target, and only the stage's functions may receive one.
    const stage = stageArg(values.stage);
    const max = maxArg(values.max);
    const queueUrl = named ?? (await queueUrlOf(stage, io.listQueues ?? listQueues));
    io.out(`queue: ${queueUrl}`);
    const result = await redriveDeadLetters({
      queue: (io.queue ?? ((url) => createSqsDeadLetterQueue({ client: new SQSClient({}), queueUrl: url })))(queueUrl),
      redeliver: io.redeliver ?? lambdaRedelivery(new LambdaClient({})),
      max,
      dryRun: values["dry-run"],
      allowTarget: stageFunction(stage, queueUrl),
      report: io.out,
    });
    io.out(`${values["dry-run"] ? "would redrive" : "redriven"}: ${result.moved}, kept in the queue: ${result.kept}`);
    return result.kept > 0 ? 1 : 0;
  });
}

/** sweep-blobs: 0 when it ran (whatever it deleted), 1 when the service refused, 2 on a usage mistake. */
async function sweep(io: OpsCliIo, args: { tenant?: string; process?: string; dryRun: boolean }): Promise<number> {
  const key = { tenantId: tenantArg(args.tenant), processId: processArg(args.process) };
  const blobs = io.blobs ?? createBlobStore(io.env);
  if (!blobs) throw new UsageError("sweep-blobs needs the stage's blob store: set BLOB_BUCKET (or BLOB_DIR for a local folder)");
  const deps = createDeps({ env: {}, store: io.store ?? createDynamoStore(tableFrom(io.env)), log: silentLog, metrics: createRecordingMetrics(), events: { publish: async () => {} } });
  Object.assign(deps, { blobs, blobReader: createCachedBlobReader(blobs) });
  try {
    const result = await sweepBlobs(deps, key, { dryRun: args.dryRun });
    for (const sha of result.deleted) io.out(`${args.dryRun ? "would delete" : "deleted"} ${sha}`);
    for (const sha of result.restored) io.out(`kept ${sha} (a message written meanwhile names it)`);
    io.out(`${args.dryRun ? "would delete" : "deleted"}: ${result.deleted.length}, kept: ${result.kept + result.restored.length} of ${result.listed} blobs`);
    return 0;
  } catch (e) {
    if (!(e instanceof AppError) || e.kind === "internal") throw e;
    io.err(`refused (${e.code}): ${e.message}`);
    return 1;
  }
}

function processArg(value: string | undefined): string {
  if (!value) throw new UsageError("--process is required");
  const parsed = Id.safeParse(value);
  if (!parsed.success) throw new UsageError(`--process '${value}': ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

await runAsScript(import.meta.url, runOpsCli);
