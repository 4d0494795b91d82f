/**
 * What the services need, built once per container by the composition root. The interfaces of
 * the parts built for them (the budget policy, history search) live here too, so that the modules
 * implementing them and this one never import each other (test/infra/structure.test.ts).
 */
import type { Memory, Message } from "../domain/model.js";
import type { HistoryQuery } from "../domain/search-index.js";
import type { BlobScope, BlobStore } from "../ports/blob-store.js";
import type { Clock, Ids } from "../ports/clock.js";
import type { EventPublisher } from "../ports/events.js";
import type { Log } from "../ports/logger.js";
import type { Metrics } from "../ports/metrics.js";
import type { ProcessKey, Store } from "../ports/store.js";
import type { Summarizer } from "../ports/summarizer.js";
import type { TunablesResolver } from "./tunables.js";

/** Each tenant's daily model budget (core/services/compaction/model-budget.ts builds it). */
export interface BudgetPolicy {
  /** The tenant's budget in tokens per UTC day; null when unlimited. */
  dailyTokens(tenantId: string): Promise<number | null>;
}

export interface CoreDeps {
  store: Store;
  clock: Clock;
  /** How a retry waits (core/services/compaction/lease.ts); default: a real timer. Tests and harnesses inject their own. */
  sleep?: (ms: number) => Promise<void>;
  ids: Ids;
  log: Log;
  /**
   * Where the large parts of native message content are stored (docs/configuration.md, "Blob
   * storage"): puts and deletes. Unset: a message that needs a blob is refused, deletions skip them.
   */
  blobs?: BlobStore;
  /** Reads of `blobs` through the container's byte-bounded cache (core/services/blob-reader.ts); set whenever `blobs` is. */
  blobReader?: BlobReader;
}

export interface ServiceDeps extends CoreDeps {
  events: EventPublisher;
  metrics: Metrics;
  tunables: TunablesResolver;
  /** Each tenant's daily model budget (docs/reliability.md, "Limits, budgets and rates"). */
  budget: BudgetPolicy;
  /** Full-text index of histories, cached per container (search endpoint, recall in the context). */
  history: HistorySearch;
  /** How long a compaction lease lasts; longer than the summarizer's overall deadline. */
  leaseMs: number;
  /** Where folds are summarized (in the turn or by the worker), and the worker's timings. */
  compaction: CompactionConfig;
  /** Built lazily: handlers that never summarize never load an LLM SDK. */
  summarizer: () => Promise<Summarizer>;
  /**
   * The offline summarizer an EMERGENCY fold falls back to when the summarizer keeps failing
   * (docs/summarizers.md, "Quality gate"); without it such a fold fails as in every other mode.
   */
  offlineSummarizer?: (maxOutputTokens: number) => Summarizer;
  /** How a deletion splits its work (core/services/process-deletion.ts); defaults there. */
  erasure?: Partial<ErasureConfig>;
  /** How an export splits into pages (core/services/process-export.ts); defaults there. */
  exportPaging?: ExportPaging;
  /** Imports a tenant may start per minute over HTTP (docs/api.md, "Export and import"); default DEFAULT_IMPORTS_PER_MINUTE. */
  importsPerMinute?: number;
}

/** Cached blob reads (core/services/blob-reader.ts builds it). */
export interface BlobReader {
  /** The blob's bytes (shared between callers: never write to them), or null when there is none. */
  get(scope: BlobScope, sha256: string): Promise<Uint8Array | null>;
  stats(): BlobReaderStats;
}

/** Counters for tests and logs; `bytes` is what the cache holds now. */
export interface BlobReaderStats {
  hits: number;
  misses: number;
  evictions: number;
  bytes: number;
}

/** docs/api.md, "Export and import". */
export interface ExportPaging {
  /** Bytes of message lines after which a page ends. */
  pageBytes: number;
  /** Messages per store read. */
  readMessages: number;
}

/** docs/api.md, "Deleting a process". */
export interface ErasureConfig {
  /** Up to this many items a DELETE erases itself (204); a larger process erases in the background (202). */
  inlineItems: number;
  /** Items the background erasure deletes between two checks of where it stands. */
  batchItems: number;
}

/** How compaction runs in this deployment (docs/compaction.md, "Off the turn's critical path"); createDeps reads it from the environment (core/composition/env.ts). */
export interface CompactionConfig {
  /** `background` (default): no turn calls a summarizer. `inline`: a turn summarizes itself. */
  execution: "inline" | "background";
  /** A manual compaction answers within this, or 202 queued (well inside API Gateway's 29 s). */
  manualBudgetMs: number;
  /** A queued or prepared fold nobody committed expires after this (and DynamoDB's TTL deletes it). */
  preparedTtlMs: number;
  /** A fold still QUEUED after this is taken for lost (worker crash, dead-letter) and queued again. */
  queueTimeoutMs: number;
  /** How long the worker waits for another holder's lease before failing the delivery. */
  leaseWaitMs: number;
}

export const DEFAULT_COMPACTION_CONFIG: CompactionConfig = Object.freeze({
  execution: "background",
  manualBudgetMs: 20_000,
  preparedTtlMs: 3_600_000,
  queueTimeoutMs: 600_000,
  leaseWaitMs: 30_000,
});

/** History search and recall (core/services/history-search.ts builds it; docs/features.md "History search and recall"). */
export interface HistorySearch {
  search(deps: CoreDeps, key: ProcessKey, query: HistoryQuery): Promise<{ items: SearchResultItem[] }>;
  /**
   * The memory, the messages its `sourceRefs` name that are still kept (history recall), and the
   * ids of those a retention removed (docs/configuration.md, "Retention").
   */
  sources(deps: CoreDeps, key: ProcessKey, memoryId: string): Promise<{ memory: Memory; items: Message[]; expired: string[] }>;
  stats(): HistorySearchStats;
}

export interface SearchResultItem {
  message: Message;
  score: number;
}

/** Counters for tests and logs: how often the index was built from scratch or extended. */
export interface HistorySearchStats {
  builds: number;
  extended: number;
  hits: number;
  evictions: number;
}
