/**
 * The composition root: builds the adapters once per container from the environment. Handlers
 * that never summarize pass no summarizer factory, so their bundles never contain an LLM SDK.
 */
import { createDocumentClient } from "../adapters/dynamodb/client.js";
import { createDynamoStore } from "../adapters/dynamodb/store.js";
import { TABLE_NAME_DEFAULT } from "../adapters/dynamodb/table.js";
import { createEventBridgePublisher } from "../adapters/events/eventbridge-publisher.js";
import { createUlidIds, systemClock } from "../adapters/ids.js";
import { createJsonLog } from "../adapters/log.js";
import { createEmfMetrics } from "../adapters/metrics/emf-metrics.js";
import type { EventPublisher } from "../ports/events.js";
import type { Log } from "../ports/logger.js";
import type { Metrics } from "../ports/metrics.js";
import type { Store } from "../ports/store.js";
import type { Summarizer } from "../ports/summarizer.js";
import type { ServiceDeps } from "../services/deps.js";
import { createTunablesResolver } from "../services/tunables.js";
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from "../services/background.js";
import { createHistorySearch } from "../services/history-search.js";
import { tunablesFromEnv } from "../domain/tunables.js";

export interface RootOptions {
  env?: NodeJS.ProcessEnv;
  store?: Store;
  events?: EventPublisher;
  metrics?: Metrics;
  log?: Log;
  /** Only the functions that summarize pass one. */
  summarizerFactory?: () => Promise<Summarizer>;
}

/** A malformed lease length fails the container at start instead of every compaction later. */
function leaseMsFrom(env: NodeJS.ProcessEnv): number {
  const raw = env.COMPACTION_LEASE_MS?.trim();
  if (!raw) return 60_000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100 || ms > 900_000) {
    throw new Error(`COMPACTION_LEASE_MS must be a whole number of milliseconds from 100 to 900000, got '${raw}'`);
  }
  return ms;
}

/** A whole number of milliseconds from `min` to `max`, or the default when unset. */
function msFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < min || ms > max) {
    throw new Error(`${name} must be a whole number of milliseconds from ${min} to ${max}, got '${raw}'`);
  }
  return ms;
}

/** COMPACTION_EXECUTION and the worker's timings (docs/compaction.md, "Off the turn's critical path"). */
export function compactionSettingsFrom(env: NodeJS.ProcessEnv): CompactionSettings {
  const execution = env.COMPACTION_EXECUTION?.trim() || DEFAULT_COMPACTION_SETTINGS.execution;
  if (execution !== "inline" && execution !== "background") {
    throw new Error(`COMPACTION_EXECUTION must be 'background' or 'inline', got '${execution}'`);
  }
  const d = DEFAULT_COMPACTION_SETTINGS;
  return {
    execution,
    manualBudgetMs: msFrom(env, "COMPACTION_MANUAL_BUDGET_MS", d.manualBudgetMs, 1, 25_000),
    preparedTtlMs: msFrom(env, "COMPACTION_PREPARED_TTL_MS", d.preparedTtlMs, 1_000, 7 * 24 * 3_600_000),
    queueTimeoutMs: msFrom(env, "COMPACTION_QUEUE_TIMEOUT_MS", d.queueTimeoutMs, 1_000, 24 * 3_600_000),
    leaseWaitMs: msFrom(env, "COMPACTION_LEASE_WAIT_MS", d.leaseWaitMs, 0, 600_000),
  };
}

export function createDeps(options: RootOptions = {}): ServiceDeps {
  const env = options.env ?? process.env;
  const log = options.log ?? createJsonLog();
  const store =
    options.store ??
    createDynamoStore({
      client: createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT }),
      tableName: env.TABLE_NAME ?? TABLE_NAME_DEFAULT,
    });
  const events =
    options.events ??
    (env.EVENT_BUS_NAME
      ? createEventBridgePublisher({ busName: env.EVENT_BUS_NAME })
      : { publish: async (e) => log.warn("no EVENT_BUS_NAME: event not published", { detailType: e.detailType }) });
  let summarizer: Promise<Summarizer> | undefined;
  // A malformed tunable in the environment fails the container at start, not a turn later.
  const base = tunablesFromEnv(env);
  return {
    tunables: createTunablesResolver({ store, base }),
    history: createHistorySearch(),
    leaseMs: leaseMsFrom(env),
    compaction: compactionSettingsFrom(env),
    store,
    clock: systemClock,
    ids: createUlidIds(),
    log,
    events,
    metrics: options.metrics ?? createEmfMetrics(),
    summarizer: () => {
      if (!options.summarizerFactory) return Promise.reject(new Error("this function does not summarize"));
      // Resolved once per container, then reused by every call.
      summarizer ??= options.summarizerFactory();
      return summarizer;
    },
  };
}
