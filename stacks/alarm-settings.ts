/**
 * The stage's alarm settings, read from the deploying shell like every stage setting: where alarms
 * notify and the threshold of each (docs/deploy.md, "Alarms"; what each means: docs/operations.md).
 */

/** Each threshold: its variable, its default, and the range a value must lie in. */
export const ALARM_THRESHOLDS = {
  /** Messages visible in the events dead-letter queue. */
  dlqMessages: { env: "ALARM_DLQ_MESSAGES", default: 1, min: 1, max: 100_000 },
  /** Compaction worker invocations that threw, per 5 minutes. */
  workerErrors: { env: "ALARM_WORKER_ERRORS", default: 3, min: 1, max: 100_000 },
  /** Compaction worker invocations that ran out of time, per 5 minutes. */
  workerTimeouts: { env: "ALARM_WORKER_TIMEOUTS", default: 1, min: 1, max: 100_000 },
  /** Percent of the folds that summarized in 15 minutes whose summary failed. */
  failedFoldPercent: { env: "ALARM_FAILED_FOLD_PERCENT", default: 20, min: 1, max: 100 },
  /** Summaries the quality gate refused, per 15 minutes. */
  gateRefusals: { env: "ALARM_GATE_REFUSALS", default: 10, min: 1, max: 100_000 },
  /** Folds the offline summarizer stood in for, per 15 minutes. */
  fallbacks: { env: "ALARM_FALLBACKS", default: 3, min: 1, max: 100_000 },
  /** p99 of the turn route's latency over 5 minutes, in milliseconds (three periods in a row). */
  turnP99Ms: { env: "ALARM_TURN_P99_MS", default: 3_000, min: 50, max: 30_000 },
  /** DynamoDB requests throttled, per 5 minutes. */
  dynamoThrottles: { env: "ALARM_DYNAMODB_THROTTLES", default: 5, min: 1, max: 100_000 },
  /** DynamoDB requests that failed with a server error (HTTP 500), per 5 minutes. */
  dynamoSystemErrors: { env: "ALARM_DYNAMODB_SYSTEM_ERRORS", default: 1, min: 1, max: 100_000 },
  /** API answers with a 5xx status, per 5 minutes. */
  api5xx: { env: "ALARM_API_5XX", default: 5, min: 1, max: 100_000 },
} as const;

export type AlarmThresholdName = keyof typeof ALARM_THRESHOLDS;

export interface AlarmSettings {
  /** An existing SNS topic every alarm notifies; unset, the stage creates its own topic. */
  topicArn?: string;
  /** Addresses subscribed to the stage's own topic (each confirms by email once). */
  emails: string[];
  thresholds: Record<AlarmThresholdName, number>;
}

type Env = Record<string, string | undefined>;

const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;
// Deliberately loose (one @, no spaces): SNS itself confirms each address by mail.
const EMAIL = /^[^@\s,]+@[^@\s,]+\.[^@\s,]+$/;

function threshold(name: AlarmThresholdName, env: Env): number {
  const spec = ALARM_THRESHOLDS[name];
  const raw = env[spec.env]?.trim();
  if (!raw) return spec.default;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < spec.min || n > spec.max) {
    throw new Error(`${spec.env} must be a whole number from ${spec.min} to ${spec.max} (got '${raw}')`);
  }
  return n;
}

/**
 * Reads ALARM_TOPIC_ARN, ALARM_EMAIL (comma-separated addresses) and each threshold of
 * {@link ALARM_THRESHOLDS}; a bad value fails the deploy with the variable's name.
 */
export function readAlarmSettings(env: Env): AlarmSettings {
  const topicArn = env.ALARM_TOPIC_ARN?.trim() || undefined;
  if (topicArn && !TOPIC_ARN.test(topicArn)) throw new Error(`ALARM_TOPIC_ARN must be an SNS topic ARN (got '${topicArn}')`);
  const emails = (env.ALARM_EMAIL ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  const bad = emails.find((e) => !EMAIL.test(e));
  if (bad !== undefined) throw new Error(`ALARM_EMAIL must be comma-separated email addresses (got '${bad}')`);
  // Subscriptions of a topic the stage does not own would outlive the stage and go unmanaged.
  if (topicArn && emails.length > 0) throw new Error("ALARM_EMAIL subscribes to the stage's own topic: with ALARM_TOPIC_ARN, subscribe the addresses to that topic instead");
  const names = Object.keys(ALARM_THRESHOLDS) as AlarmThresholdName[];
  return {
    ...(topicArn ? { topicArn } : {}),
    emails,
    thresholds: Object.fromEntries(names.map((n) => [n, threshold(n, env)])) as Record<AlarmThresholdName, number>,
  };
}
