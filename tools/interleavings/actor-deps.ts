/**
 * The ServiceDeps of one actor: a "container" of its own whose store runs over the actor's held
 * client, with a small transaction limit (so a short history already leaves a roll-forward), no
 * waits between transaction retries, fixed tunables (no settings reads) and timings that never
 * make an actor sleep where the code lets a deployment choose (the worker fails a delivery at
 * once instead of waiting for another's lease; a manual compaction never runs past its budget).
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import { systemClock } from "../../core/adapters/ids.js";
import { silentLog } from "../../core/adapters/log.js";
import { AppError } from "../../core/domain/errors.js";
import { mergeTunables, DEFAULT_TUNABLES, type Tunables, type TunablesOverride } from "../../core/domain/tunables.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { Ids } from "../../core/ports/clock.js";
import type { DomainEvent } from "../../core/ports/events.js";
import type { Metrics } from "../../core/ports/metrics.js";
import type { CompactionConfig } from "../../core/services/deps.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { createHistorySearch } from "../../core/services/history-search.js";
import { UNLIMITED_BUDGET } from "../../core/services/compaction/model-budget.js";
import type { TunablesResolver } from "../../core/services/tunables.js";
import type { SummarizeInput, SummarizeOutcome, Summarizer } from "../../core/ports/summarizer.js";

/** Items per transaction in the checker: a fold of more than 3-4 messages leaves a roll-forward. */
export const CHECKER_TRANSACTION_LIMIT = 6;

/** Small histories fold: few messages kept back, SOFT folds whatever it selects; under a retention. */
export const CHECKER_TUNABLES: TunablesOverride = {
  keepRecent: 2,
  softAnchor: 2,
  hardAnchor: 2,
  emergencyAnchor: 1,
  softMinFoldTokens: 0,
  summaryMaxTokens: 200,
  summaryWindowShare: 0,
  recallMaxTokens: 0,
  // Every archive and restore then writes and removes the originals' expiry the invariants check.
  retentionDays: 30,
};

export const quietMetrics: Metrics = {
  compaction: () => {},
  summarizerWallTime: () => {},
  foldOutcome: () => {},
  qualityGateRefused: () => {},
  summarizerFallback: () => {},
  summarizerFailed: () => {},
  preparedFold: () => {},
  strengthAnalysis: () => {},
  modelUsage: () => {},
  budgetExceeded: () => {},
  providerBlockRefused: () => {},
  revert: () => {},
  originalsMissing: () => {},
  rateLimited: () => {},
  eventDropped: () => {},
  invalidSetting: () => {},
  flush: () => {},
};

function fixedTunables(tunables: Tunables): TunablesResolver {
  return {
    forProcess: async () => tunables,
    save: async () => {
      throw new AppError("input", "settings.read_only", "the checker's tunables are fixed");
    },
    read: async () => ({}),
  };
}

export interface ActorDepsOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Shared by every actor of a schedule: ids grow in the order they are made, whoever makes them. */
  ids: Ids;
  execution?: CompactionConfig["execution"];
  tunables?: TunablesOverride;
  /** Where published events go (a scenario may deliver them again). */
  events?: DomainEvent[];
  /** The schedule's blob store (one bucket: every actor of a schedule shares it). */
  blobs?: BlobStore;
}

export function actorDeps(o: ActorDepsOptions): ServiceDeps {
  const store = createDynamoStore({
    client: o.client,
    tableName: o.tableName,
    transactionLimit: CHECKER_TRANSACTION_LIMIT,
    retry: { sleep: async () => {}, random: () => 0.5 },
  });
  const summarizer = createInstantSummarizer();
  const events = o.events ?? [];
  return {
    store,
    clock: systemClock,
    ids: o.ids,
    log: silentLog,
    events: { publish: async (e) => void events.push(e) },
    metrics: quietMetrics,
    tunables: fixedTunables(mergeTunables(DEFAULT_TUNABLES, { ...CHECKER_TUNABLES, ...o.tunables })),
    history: createHistorySearch(),
    budget: UNLIMITED_BUDGET,
    leaseMs: 60_000,
    compaction: {
      execution: o.execution ?? "inline",
      manualBudgetMs: 600_000,
      preparedTtlMs: 3_600_000,
      queueTimeoutMs: 600_000,
      leaseWaitMs: 0,
    },
    summarizer: async () => summarizer,
    ...(o.blobs ? { blobs: o.blobs } : {}),
  };
}

/**
 * The checker's summarizer: answers at once (no timer, so an actor runs straight to its next
 * DynamoDB call) with a deterministic summary that names what it folded and carries every unit
 * it must keep (the quality gate passes).
 */
function createInstantSummarizer(): Summarizer {
  return {
    provider: "checker",
    model: "instant",
    contextWindow: 200_000,
    maxOutputTokens: 400,
    async summarize(input: SummarizeInput): Promise<SummarizeOutcome> {
      const first = input.messages[0]?.id ?? "-";
      const last = input.messages.at(-1)?.id ?? "-";
      const keep = input.mustKeep?.length ? ` keeps ${input.mustKeep.join("; ")}` : "";
      const topic = input.topicLabel ? ` on ${input.topicLabel}` : "";
      return { ok: true, summary: `Folded ${input.messages.length} messages ${first}..${last}${topic}.${keep}`, usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}
