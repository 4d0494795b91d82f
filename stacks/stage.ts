/**
 * Stage naming and the stage-level settings read from the deploying shell. One stage per team
 * (`npx sst deploy --stage team-a`); dev stages are disposable, every other stage keeps its data.
 */

/** `dev`, `local`, `dev-*` and `pr-*` are disposable: no deletion protection, data destroyed on remove. */
export function isDevStage(stage: string): boolean {
  return stage === "dev" || stage === "local" || stage.startsWith("dev-") || stage.startsWith("pr-");
}

export { SERVICE_NAME } from "../core/domain/service.js";
import { readDailyTokenBudget } from "../core/composition/env.js";
import { SERVICE_NAME } from "../core/domain/service.js";
import { readRateLimits } from "../core/composition/env.js";
import { DEFAULT_TENANT_RATE_LIMIT } from "../core/domain/rate-limit.js";
import { parsePublisherGrants, publisherAccounts } from "../core/domain/event-publishers.js";
import {
  keyParameterName,
  PROVIDER_NAMES,
  PROVIDERS,
  REMOTE_PROVIDERS,
  type ProviderName,
  type RemoteProviderName,
} from "../core/adapters/llm/provider-descriptors.js";
import { readAlarmSettings, type AlarmSettings } from "./alarm-settings.js";
export const METRICS_NAMESPACE = "Vancetope/Memory";

export interface StageConfig {
  stage: string;
  dev: boolean;
  /** Unset: the function picks a provider by which key parameter exists (docs/summarizers.md). */
  summarizer?: ProviderName;
  summarizerModel?: string;
  /** Each remote provider's base URL variable (e.g. OPENAI_BASE_URL), when the shell sets it. */
  baseUrls: Partial<Record<RemoteProviderName, string>>;
  /** SSM SecureString parameter names holding the LLM keys (created by the operator), per remote provider. */
  secretParams: Record<RemoteProviderName, string>;
  /** A customer managed KMS key encrypting those parameters; the default aws/ssm key needs none. */
  secretsKmsKeyArn?: string;
  /**
   * Other AWS accounts allowed to put PlanCompleted / InboxItemAnswered events on the bus, each
   * with the tenants its events may act for: `account=tenant,…` (normalised; `*` for any tenant),
   * and the accounts it names.
   */
  eventPublishers: string;
  eventPublisherAccounts: string[];
  /** The key of the paging cursors' HMAC (CURSOR_SECRET); unset (dev stages only), the functions use the public local default. */
  cursorSecret?: string;
  /**
   * The HTTP routes' per-tenant request rate (docs/reliability.md, "Limits, budgets and rates"):
   * requests per second of every tenant (0 = unlimited), and the operator's limits for named
   * tenants as `tenant=n,…` (normalised).
   */
  tenantRateLimit: number;
  tenantRateLimits: string;
  /**
   * The compaction worker's reserved concurrency: at most this many folds summarize at once across
   * the stage, and the account keeps that many executions free for them. Undefined: none reserved.
   */
  workerReservedConcurrency?: number;
  /** TENANT_DAILY_TOKEN_BUDGET for the functions that summarize; unset: their default (unlimited). */
  tenantDailyTokenBudget?: string;
  /** Where the stage's alarms notify and their thresholds (ALARM_*; docs/operations.md). */
  alarms: AlarmSettings;
}

/** The worker's reserved concurrency when the deploying shell names none (docs/deploy.md). */
export const DEFAULT_WORKER_RESERVED_CONCURRENCY = 10;

/** VANCETOPE_WORKER_CONCURRENCY: a whole number from 1 to 1000, or `none`; unset: the default. */
function workerConcurrency(raw: string | undefined): number | undefined {
  if (raw === undefined) return DEFAULT_WORKER_RESERVED_CONCURRENCY;
  if (raw.toLowerCase() === "none") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error(`VANCETOPE_WORKER_CONCURRENCY must be 'none' or a whole number from 1 to 1000 (got '${raw}')`);
  return n;
}

type Env = Record<string, string | undefined>;

const nonEmpty = (v: string | undefined) => (v && v.trim() ? v.trim() : undefined);

/** SSM parameter path of one LLM key for a stage: `/vancetope-memory/<stage>/<provider>-api-key`. */
export const llmKeyParameterName = (stage: string, provider: RemoteProviderName) =>
  keyParameterName(SERVICE_NAME, stage, provider);

/** One value per remote provider, in the descriptors' order. */
const perRemoteProvider = <T>(value: (name: RemoteProviderName, envName: string) => T) =>
  Object.fromEntries(REMOTE_PROVIDERS.map(([name, r]) => [name, value(name, r.baseUrlEnv)])) as Record<RemoteProviderName, T>;

/**
 * Reads SUMMARIZER, SUMMARIZER_MODEL, each remote provider's base URL variable (OPENAI_BASE_URL, …),
 * VANCETOPE_SECRETS_KMS_KEY_ARN, VANCETOPE_EVENT_PUBLISHERS (`account=tenant,…`), TENANT_RATE_LIMIT
 * (default 20), TENANT_RATE_LIMITS, VANCETOPE_CURSOR_SECRET, VANCETOPE_WORKER_CONCURRENCY and
 * TENANT_DAILY_TOKEN_BUDGET (each checked as the functions will read it), and the ALARM_* settings
 * (alarm-settings.ts). The LLM keys themselves
 * are never read here: they live in SSM only.
 */
export function readStageConfig(stage: string, env: Env = process.env): StageConfig {
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(stage)) throw new Error(`invalid stage name '${stage}'`);
  const summarizer = nonEmpty(env.SUMMARIZER);
  if (summarizer && !Object.hasOwn(PROVIDERS, summarizer)) {
    throw new Error(`SUMMARIZER must be one of ${PROVIDER_NAMES.join(", ")} (got '${summarizer}')`);
  }
  if (nonEmpty(env.VANCETOPE_EVENT_PUBLISHER_ACCOUNTS)) {
    // An account list alone would let each account act for every tenant: refuse it, do not guess.
    throw new Error(
      "VANCETOPE_EVENT_PUBLISHER_ACCOUNTS is replaced by VANCETOPE_EVENT_PUBLISHERS=<account>=<tenant>,…: name the tenants each account may act for",
    );
  }
  const grants = parsePublisherGrants(env.VANCETOPE_EVENT_PUBLISHERS ?? "", "VANCETOPE_EVENT_PUBLISHERS");
  const kms = nonEmpty(env.VANCETOPE_SECRETS_KMS_KEY_ARN);
  if (kms && !/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/.test(kms)) {
    throw new Error(`VANCETOPE_SECRETS_KMS_KEY_ARN must be a KMS key ARN (got '${kms}')`);
  }
  const cursorSecret = nonEmpty(env.VANCETOPE_CURSOR_SECRET);
  if (cursorSecret && cursorSecret.length < 32) throw new Error("VANCETOPE_CURSOR_SECRET must be at least 32 characters");
  // The local default is public: anyone could sign a cursor for a stage that uses it.
  if (!cursorSecret && !isDevStage(stage)) {
    throw new Error(`VANCETOPE_CURSOR_SECRET is required for stage '${stage}' (only dev stages may use the public local key): openssl rand -base64 48`);
  }
  // Checked like the functions check them, so a bad value fails the deploy, not every request.
  const rates = readRateLimits({
    TENANT_RATE_LIMIT: nonEmpty(env.TENANT_RATE_LIMIT) ?? String(DEFAULT_TENANT_RATE_LIMIT),
    TENANT_RATE_LIMITS: env.TENANT_RATE_LIMITS,
  })!;
  const budget = nonEmpty(env.TENANT_DAILY_TOKEN_BUDGET);
  readDailyTokenBudget({ TENANT_DAILY_TOKEN_BUDGET: budget });
  return {
    stage,
    dev: isDevStage(stage),
    summarizer: summarizer as StageConfig["summarizer"],
    summarizerModel: nonEmpty(env.SUMMARIZER_MODEL),
    baseUrls: Object.fromEntries(
      Object.entries(perRemoteProvider((_, envName) => nonEmpty(env[envName]))).filter(([, url]) => url !== undefined),
    ),
    secretParams: perRemoteProvider((name) => llmKeyParameterName(stage, name)),
    secretsKmsKeyArn: kms,
    eventPublishers: [...grants]
      .flatMap(([account, tenants]) => (tenants === "any" ? [`${account}=*`] : [...tenants].map((t) => `${account}=${t}`)))
      .join(","),
    eventPublisherAccounts: publisherAccounts(grants),
    tenantRateLimit: rates.perSecond,
    tenantRateLimits: [...rates.perTenant].map(([tenant, n]) => `${tenant}=${n}`).join(","),
    cursorSecret,
    workerReservedConcurrency: workerConcurrency(nonEmpty(env.VANCETOPE_WORKER_CONCURRENCY)),
    tenantDailyTokenBudget: budget,
    alarms: readAlarmSettings(env),
  };
}
