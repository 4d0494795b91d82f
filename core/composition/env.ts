/**
 * The reader of the service's own environment variables. Each is parsed and checked here, once,
 * when the container starts: a malformed value fails the start with a message naming the variable,
 * instead of every request later. The variables are listed in docs/deploy.md (functions) and the
 * README (local runner). Read elsewhere, where they are used: the tunables' variables
 * (`tunablesFromEnv`, core/domain/tunables.ts, called from here), the summarizer's provider and
 * model (core/adapters/llm/create-summarizer.ts), the LLM keys' parameters
 * (core/adapters/secrets/llm-secrets.ts), and the AWS and Powertools variables their SDKs define
 * (AWS_REGION in core/adapters/dynamodb/client.ts, POWERTOOLS_METRICS_NAMESPACE in
 * core/adapters/metrics/emf-metrics.ts).
 */
import { parsePublisherGrants, type PublisherGrants } from "../domain/event-publishers.js";
import { Id } from "../domain/fields.js";
import { DEFAULT_TENANT_RATE_LIMIT, MAX_TENANT_RATE_LIMIT, type RateLimits } from "../domain/rate-limit.js";
import { SERVICE_NAME } from "../domain/service.js";
import { tunablesFromEnv, type Tunables } from "../domain/tunables.js";
import type { CompactionConfig } from "../services/deps.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** Set and not blank, trimmed; else undefined. Every variable here is read through it. */
const valueOf = (env: Env, name: string): string | undefined => env[name]?.trim() || undefined;

/** `raw` as a whole number from `min` to `max`, or an error naming the variable and the unit. */
function wholeNumber(name: string, raw: string, min: number, max: number, unit?: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) {
    throw new Error(`${name} must be a whole number${unit ? ` of ${unit}` : ""} from ${min} to ${max}, got '${raw}'`);
  }
  return n;
}

/** Where the service's data is: every function and the local runner. */
export interface TableEnv {
  tableName: string;
  /** DynamoDB Local's URL; unset in AWS. */
  dynamoEndpoint?: string;
}

export function readTableEnv(env: Env): TableEnv {
  return { tableName: valueOf(env, "TABLE_NAME") ?? SERVICE_NAME, dynamoEndpoint: valueOf(env, "DYNAMODB_ENDPOINT") };
}

/**
 * CURSOR_SECRET: the key that signs paging cursors (core/adapters/http/cursors.ts), one per stage;
 * unset, the HTTP app uses its documented local default. At least 32 characters.
 */
export function cursorSecretOf(env: Env): string | undefined {
  const secret = valueOf(env, "CURSOR_SECRET");
  if (secret !== undefined && secret.length < 32) throw new Error("CURSOR_SECRET must be at least 32 characters");
  return secret;
}

/** The `service` of log lines and metrics (POWERTOOLS_SERVICE_NAME). */
export const serviceNameOf = (env: Env): string => valueOf(env, "POWERTOOLS_SERVICE_NAME") ?? SERVICE_NAME;

/** What the composition root builds the services from. */
export interface ServiceEnv extends TableEnv {
  serviceName: string;
  /** Unset locally: events then go to the in-process bus (or are logged and dropped). */
  eventBusName?: string;
  tunables: Tunables;
  leaseMs: number;
  compaction: CompactionConfig;
  /** TENANT_DAILY_TOKEN_BUDGET: model tokens per tenant and UTC day where the operator set none; null = unlimited. */
  dailyTokenBudget: number | null;
}

/**
 * TENANT_DAILY_TOKEN_BUDGET (docs/reliability.md, "Limits, budgets and rates"): `unlimited` (the default)
 * or a whole number of tokens per tenant and UTC day.
 */
export function readDailyTokenBudget(env: Env): number | null {
  const raw = valueOf(env, "TENANT_DAILY_TOKEN_BUDGET");
  if (!raw || raw.toLowerCase() === "unlimited") return null;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < 1) {
    throw new Error(`TENANT_DAILY_TOKEN_BUDGET must be 'unlimited' or a whole number of tokens from 1, got '${raw}'`);
  }
  return Number(raw);
}

/** The compaction worker's function name, set on the functions that queue folds. */
export const workerFunctionOf = (env: Env): string | undefined => valueOf(env, "COMPACTION_WORKER_FUNCTION");

/** A whole number of milliseconds from `min` to `max`, or `fallback` when unset or blank. */
function msFrom(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = valueOf(env, name);
  return raw === undefined ? fallback : wholeNumber(name, raw, min, max, "milliseconds");
}

/** COMPACTION_EXECUTION and the worker's timings (docs/compaction.md, "Off the turn's critical path"). */
function readCompactionConfig(env: Env, defaults: CompactionConfig): CompactionConfig {
  const execution = valueOf(env, "COMPACTION_EXECUTION") ?? defaults.execution;
  if (execution !== "inline" && execution !== "background") {
    throw new Error(`COMPACTION_EXECUTION must be 'background' or 'inline', got '${execution}'`);
  }
  return {
    execution,
    manualBudgetMs: msFrom(env, "COMPACTION_MANUAL_BUDGET_MS", defaults.manualBudgetMs, 1, 25_000),
    preparedTtlMs: msFrom(env, "COMPACTION_PREPARED_TTL_MS", defaults.preparedTtlMs, 1_000, 7 * 24 * 3_600_000),
    queueTimeoutMs: msFrom(env, "COMPACTION_QUEUE_TIMEOUT_MS", defaults.queueTimeoutMs, 1_000, 24 * 3_600_000),
    leaseWaitMs: msFrom(env, "COMPACTION_LEASE_WAIT_MS", defaults.leaseWaitMs, 0, 600_000),
  };
}

/**
 * Everything the composition root needs. Order matters only for which of two bad variables is
 * named first: the tunables, then the lease, then the compaction configuration.
 */
export function readServiceEnv(env: Env, compactionDefaults: CompactionConfig): ServiceEnv {
  const tunables = tunablesFromEnv(env);
  return {
    ...readTableEnv(env),
    serviceName: serviceNameOf(env),
    eventBusName: valueOf(env, "EVENT_BUS_NAME"),
    tunables,
    leaseMs: msFrom(env, "COMPACTION_LEASE_MS", 60_000, 100, 900_000),
    compaction: readCompactionConfig(env, compactionDefaults),
    dailyTokenBudget: readDailyTokenBudget(env),
  };
}

/**
 * EVENT_PUBLISHERS of the event handler functions: the accounts outside the service that may put
 * incoming events, each with the tenants it may act for (`account=tenant,…`, `*` for any; the
 * stage's VANCETOPE_EVENT_PUBLISHERS). Unset: no account but the service's own.
 */
export const readEventPublishers = (env: Env): PublisherGrants => parsePublisherGrants(valueOf(env, "EVENT_PUBLISHERS") ?? "");

/** A whole number of requests per second from `min` to MAX_TENANT_RATE_LIMIT. */
const ratePerSecond = (name: string, raw: string, min: number): number =>
  wholeNumber(name, raw, min, MAX_TENANT_RATE_LIMIT, "requests per second");

/**
 * The per-tenant request rate of the HTTP routes (docs/reliability.md, "Limits, budgets and
 * rates"): TENANT_RATE_LIMIT (requests per second of every tenant; 0 = unlimited) and
 * TENANT_RATE_LIMITS (`tenantA=50,tenantB=5`, the operator's limits for named tenants). Both unset:
 * undefined, nothing is counted (the local runner's default; every deployed stage sets them).
 */
export function readRateLimits(env: Env): RateLimits | undefined {
  const base = valueOf(env, "TENANT_RATE_LIMIT");
  const list = valueOf(env, "TENANT_RATE_LIMITS");
  if (base === undefined && list === undefined) return undefined;
  const perTenant = new Map<string, number>();
  for (const entry of (list ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const at = entry.lastIndexOf("=");
    const tenant = entry.slice(0, at).trim();
    if (at <= 0 || !Id.safeParse(tenant).success) {
      throw new Error(`TENANT_RATE_LIMITS: '${entry}' is not tenant=requests-per-second with a valid tenant id`);
    }
    if (perTenant.has(tenant)) throw new Error(`TENANT_RATE_LIMITS: tenant '${tenant}' is listed twice`);
    perTenant.set(tenant, ratePerSecond("TENANT_RATE_LIMITS", entry.slice(at + 1).trim(), 1));
  }
  const perSecond = base === undefined ? DEFAULT_TENANT_RATE_LIMIT : ratePerSecond("TENANT_RATE_LIMIT", base, 0);
  return { perSecond, perTenant };
}

/**
 * Where blobs are stored (docs/configuration.md, "Blob storage"): BLOB_BUCKET (S3; every deployed
 * function that stores or reads them), S3_ENDPOINT (an S3-compatible server's URL, addressed by
 * path) and BLOB_DIR (a local folder). The bucket wins over the folder.
 */
export interface BlobEnv {
  bucket?: string;
  s3Endpoint?: string;
  dir?: string;
  /** AWS_LAMBDA_FUNCTION_NAME is set (by the Lambda runtime): a deployed function, which needs the bucket. */
  inLambda: boolean;
}

export function readBlobEnv(env: Env): BlobEnv {
  const bucket = valueOf(env, "BLOB_BUCKET");
  // S3's bucket naming rules, so that a typo fails the start rather than the first put.
  if (bucket !== undefined && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new Error(`BLOB_BUCKET must be an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens), got '${bucket}'`);
  }
  const s3Endpoint = valueOf(env, "S3_ENDPOINT");
  if (s3Endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(s3Endpoint)) {
    throw new Error(`S3_ENDPOINT must be an http(s) URL, got '${s3Endpoint}'`);
  }
  return { bucket, s3Endpoint, dir: valueOf(env, "BLOB_DIR"), inLambda: valueOf(env, "AWS_LAMBDA_FUNCTION_NAME") !== undefined };
}

/** The local runner's own variables (docs/configuration.md, "Environment"). */
export interface LocalEnv {
  /** MEMORY_API_KEYS as given (`key=tenant,…`); parsed by the HTTP adapter's key resolver. */
  apiKeys?: string;
  port: number;
  /** MEMORY_DATA_DIR: keep DynamoDB Local's data in this folder instead of in memory. */
  dataDir?: string;
}

export function readLocalEnv(env: Env): LocalEnv {
  const port = valueOf(env, "PORT");
  return {
    apiKeys: valueOf(env, "MEMORY_API_KEYS"),
    port: port === undefined ? 3000 : wholeNumber("PORT", port, 0, 65_535),
    dataDir: valueOf(env, "MEMORY_DATA_DIR"),
  };
}
