/**
 * Every Lambda of the service and what it may touch: its entry file, whether it summarizes (and so
 * bundles the LLM SDKs and reads the LLM secrets), which table indexes it queries and which event
 * sources it publishes. The stacks derive each function's IAM policy from this list and the infra
 * tests check the templates and bundles against it.
 */
import type { tableIndexes } from "../core/adapters/dynamodb/table.js";
import { EVENT_SOURCES, type EventSource } from "../core/domain/events.js";

// The sources come from the event catalogue (core/domain/events.ts), like the rules' patterns.
export { EVENT_SOURCES, type EventSource };

export interface HandlerSpec {
  /** Entry file, relative to the repository root; it exports `handler`. */
  entry: string;
  /** True when the function calls a summarizer: LLM SDKs, SSM secrets, SUMMARIZER env. */
  summarizes: boolean;
  /** `read-write`: the service's item actions (DeleteItem only with `erases`, never Scan); `api-keys`: GetItem on key items only. */
  table: "read-write" | "api-keys";
  /** Indexes the function queries (their ARNs get dynamodb:Query). */
  queries: ReadonlyArray<keyof typeof tableIndexes>;
  /** Event sources the function may put on the bus (an `events:source` condition). */
  publishes: readonly EventSource[];
  memoryMb: number;
  timeoutSeconds: number;
  /** Extra environment of this function only. */
  environment?: Readonly<Record<string, string>>;
  /** True when the function queues folds: it may invoke the compaction worker (and only that). */
  queuesFolds?: boolean;
  /** True when the function serves paged listings: it gets the cursors' signing key (CURSOR_SECRET). */
  listsPages?: boolean;
  /** True for the HTTP routes: they count each tenant's requests (TENANT_RATE_LIMIT, TENANT_RATE_LIMITS). */
  rateLimited?: boolean;
  /** True for the targets of the incoming events: they check each event's account (EVENT_PUBLISHERS). */
  receivesEvents?: boolean;
  /** True when the function erases deleted processes (docs/api.md, "Deleting a process"): it alone gets DeleteItem. */
  erases?: boolean;
  /** True for the compaction worker: it gets the stage's reserved concurrency (stage.ts). */
  reservesConcurrency?: boolean;
  /**
   * True when the function bundles the Powertools Tracer: its store, event and summarizer calls are
   * subsegments of its X-Ray trace (docs/deploy.md, "Traces"). Every function is traced by
   * Lambda; the plain routes and the authorizer leave the X-Ray SDK out, which would take them
   * past their bundle-size and cold-import targets (docs/benchmarks.md, "Cold start").
   */
  tracesCalls?: boolean;
  /** True when the function serves `GET /openapi.json`: docs/openapi.json is deployed next to its bundle. */
  servesDocument?: boolean;
  /**
   * What the function does with the blobs bucket (docs/configuration.md, "Blob storage"): `read`
   * (GetObject), `write` (PutObject), `delete` (DeleteObject), each on `blobs/*` only, plus
   * ListBucket for reading and deleting. Such a function gets BLOB_BUCKET and fails its start without it.
   */
  blobs?: readonly BlobAccess[];
}

export type BlobAccess = "read" | "write" | "delete";

/** The worker's timeout; its lease outlasts it, so a job still running is never taken over. */
export const WORKER_TIMEOUT_SECONDS = 300;

export const HANDLERS = {
  /** The HTTP routes that never summarize; the answer endpoint publishes InboxItemAnswered. */
  plainRoutes: {
    entry: "functions/plain-routes.ts",
    summarizes: false,
    listsPages: true,
    rateLimited: true,
    servesDocument: true,
    table: "read-write",
    queries: ["lsi1", "gsi1", "gsi2"],
    publishes: [EVENT_SOURCES.inbox],
    // Appends store large native parts; message reads resolve them.
    blobs: ["read", "write"],
    memoryMb: 1024,
    timeoutSeconds: 10,
  },
  /**
   * The HTTP routes that may summarize: turns (most of its traffic), compaction, range compaction
   * and saving settings; also deleting, exporting (paged: it signs cursors) and importing a
   * process, kept out of the plain routes' bundle; 29 s is API Gateway's integration limit. Turns queue folds for the worker
   * instead of summarizing (docs/compaction.md).
   */
  summarizingRoutes: {
    entry: "functions/summarizing-routes.ts",
    summarizes: true,
    rateLimited: true,
    listsPages: true,
    queuesFolds: true,
    tracesCalls: true,
    erases: true,
    table: "read-write",
    queries: ["lsi1", "gsi2"],
    publishes: [EVENT_SOURCES.memory],
    // Turns append and answer messages, export reads, import writes, a small deletion deletes.
    blobs: ["read", "write", "delete"],
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  /** EventBridge PlanCompleted target: posts a recompaction offer (no LLM; reads the base table only). */
  planCompleted: {
    entry: "functions/plan-completed.ts",
    summarizes: false,
    tracesCalls: true,
    receivesEvents: true,
    table: "read-write",
    queries: [],
    publishes: [EVENT_SOURCES.memory],
    memoryMb: 512,
    timeoutSeconds: 30,
  },
  /** EventBridge InboxItemAnswered target: queues the accepted range compaction for the worker (no LLM). */
  inboxAnswered: {
    entry: "functions/inbox-answered.ts",
    summarizes: false,
    tracesCalls: true,
    receivesEvents: true,
    queuesFolds: true,
    table: "read-write",
    queries: ["lsi1"],
    publishes: [EVENT_SOURCES.memory],
    memoryMb: 1024,
    timeoutSeconds: 60,
  },
  /**
   * The compaction worker, invoked asynchronously with a CompactionRequested event: prepares queued
   * folds (never replayed until a turn commits them) and runs queued manual compactions, off the
   * request path (docs/compaction.md).
   */
  compactionWorker: {
    entry: "functions/compaction-worker.ts",
    summarizes: true,
    tracesCalls: true,
    erases: true,
    table: "read-write",
    queries: ["lsi1", "gsi2"],
    publishes: [EVENT_SOURCES.memory],
    // A provider fold reads the messages' native content and the previous block, and puts a block
    // past the inline size (docs/summarizers.md, "Provider folds"); the background erasure of a large
    // deleted process deletes.
    blobs: ["read", "write", "delete"],
    memoryMb: 1024,
    timeoutSeconds: WORKER_TIMEOUT_SECONDS,
    environment: { COMPACTION_LEASE_MS: String((WORKER_TIMEOUT_SECONDS + 30) * 1000) },
    reservesConcurrency: true,
  },
  /**
   * The table's stream target, filtered to the originals DynamoDB's TTL removed that kept blobs:
   * deletes the blobs no kept message names (docs/configuration.md, "Retention"); it reads the
   * process's messages and may put back a blob an append named meanwhile.
   */
  blobExpiry: {
    entry: "functions/blob-expiry.ts",
    summarizes: false,
    table: "read-write",
    queries: [],
    publishes: [],
    blobs: ["read", "write", "delete"],
    memoryMb: 512,
    timeoutSeconds: 120,
  },
  /** The HTTP API's Lambda authorizer: one GetItem per uncached key, nothing else. */
  authorizer: {
    entry: "functions/authorizer.ts",
    summarizes: false,
    table: "api-keys",
    queries: [],
    publishes: [],
    memoryMb: 256,
    timeoutSeconds: 5,
  },
} as const satisfies Record<string, HandlerSpec>;

export type HandlerName = keyof typeof HANDLERS;

/** The generated OpenAPI document (`npm run openapi`), deployed with the functions that serve it. */
export const OPENAPI_DOCUMENT = "docs/openapi.json";

/** SST's handler string for an entry: `functions/plain-routes.ts` -> `functions/plain-routes.handler`. */
export const sstHandler = (entry: string) => entry.replace(/\.ts$/, ".handler");
