/**
 * The composition root: builds the adapters once per container from the environment. Handlers
 * that never summarize pass no summarizer factory, so their bundles never contain an LLM SDK; the
 * plain routes build their dependencies here alone, without the offline summarizer that only a
 * fold falls back to (create-deps.ts adds it), which keeps their bundle within its size target
 * (docs/benchmarks.md, "Cold start").
 */
import { createDocumentClient } from "../adapters/dynamodb/client.js";
import { createServiceStore, type DynamoStoreOptions } from "../adapters/dynamodb/store.js";
import { createEventBridgePublisher } from "../adapters/events/eventbridge-publisher.js";
import { createUlidIds, systemClock } from "../adapters/ids.js";
import { createPowertoolsLog } from "../adapters/log.js";
import { createEmfMetrics } from "../adapters/metrics/emf-metrics.js";
import type { BlobStore } from "../ports/blob-store.js";
import type { EventPublisher } from "../ports/events.js";
import type { Log } from "../ports/logger.js";
import type { Metrics } from "../ports/metrics.js";
import type { Store } from "../ports/store.js";
import type { Summarizer } from "../ports/summarizer.js";
import type { Tracing } from "../ports/tracing.js";
import type { ServiceDeps } from "../services/deps.js";
import { createTunablesResolver } from "../services/tunables.js";
import { createCachedBlobReader } from "../services/blob-reader.js";
import { DEFAULT_COMPACTION_CONFIG } from "../services/deps.js";
import { createHistorySearch } from "../services/history-search.js";
import { createBudgetPolicy } from "../services/compaction/model-budget.js";
import { readServiceEnv } from "./env.js";

export interface RootOptions {
  env?: NodeJS.ProcessEnv;
  store?: Store;
  events?: EventPublisher;
  metrics?: Metrics;
  log?: Log;
  /**
   * Builds the DynamoDB store when none is given: without the import port by default (the plain
   * routes); create-deps.ts passes the importing one.
   */
  createStore?: (options: DynamoStoreOptions) => Store;
  /** Only the functions that summarize pass one. */
  summarizerFactory?: () => Promise<Summarizer>;
  /** The functions that trace their calls pass one (functions/*.ts); the clients built here are captured. */
  tracing?: Tracing;
  /**
   * A given blob store (docs/configuration.md, "Blob storage"), with its cached reader built here.
   * The functions that use blobs build theirs from the environment with `withBlobStore`
   * (core/composition/blob-store.ts), so that no other bundle carries the S3 client.
   */
  blobs?: BlobStore;
}

/**
 * Builds the services' dependencies once per container: the environment is read and checked
 * first (core/composition/env.ts), so a malformed variable fails the start, not a turn later.
 * Every adapter can be replaced; what is not given is built from the environment (DynamoDB,
 * EventBridge when EVENT_BUS_NAME is set, EMF metrics, the Powertools logger; a blob store only
 * when given, see `withBlobStore`). Without a
 * `summarizerFactory`, `deps.summarizer()` rejects: the functions that never summarize bundle
 * no LLM SDK (docs/deploy.md). No `offlineSummarizer`: an EMERGENCY fold cannot fall back.
 *
 * @example
 * // functions/plain-routes.ts: everything from the environment; every other caller uses createDeps.
 * const deps = createBaseDeps();
 */
export function createBaseDeps(options: RootOptions = {}): ServiceDeps {
  const config = readServiceEnv(options.env ?? process.env, DEFAULT_COMPACTION_CONFIG);
  const log = options.log ?? createPowertoolsLog(config.serviceName);
  const store =
    options.store ??
    (options.createStore ?? createServiceStore)({
      client: createDocumentClient({ endpoint: config.dynamoEndpoint, capture: options.tracing?.capture }),
      tableName: config.tableName,
    });
  const events =
    options.events ??
    (config.eventBusName
      ? createEventBridgePublisher({ busName: config.eventBusName, capture: options.tracing?.capture })
      : { publish: async (e) => log.warn("no EVENT_BUS_NAME: event not published", { detailType: e.detailType }) });
  let summarizer: Promise<Summarizer> | undefined;
  const metrics = options.metrics ?? createEmfMetrics({ serviceName: config.serviceName });
  return {
    tunables: createTunablesResolver({ store, base: config.tunables, log, metrics }),
    budget: createBudgetPolicy({ store, defaultDailyTokens: config.dailyTokenBudget }),
    history: createHistorySearch(),
    leaseMs: config.leaseMs,
    compaction: config.compaction,
    store,
    clock: systemClock,
    ids: createUlidIds(),
    log,
    events,
    metrics,
    // Built once per container, like the store: the cache lives as long as the container.
    ...(options.blobs ? { blobs: options.blobs, blobReader: createCachedBlobReader(options.blobs) } : {}),
    summarizer: () => {
      if (!options.summarizerFactory) return Promise.reject(new Error("this function does not summarize"));
      // Resolved once per container, then reused by every call.
      summarizer ??= options.summarizerFactory().then((s) => options.tracing?.summarizer(s) ?? s);
      return summarizer;
    },
  };
}
