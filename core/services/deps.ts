/** What the services need, built once per container by the composition root. */
import type { Clock, Ids } from "../ports/clock.js";
import type { EventPublisher } from "../ports/events.js";
import type { Log } from "../ports/logger.js";
import type { Metrics } from "../ports/metrics.js";
import type { Store } from "../ports/store.js";
import type { Summarizer } from "../ports/summarizer.js";
import type { CompactionSettings } from "./compaction-settings.js";
import type { HistorySearch } from "./history-search.js";
import type { BudgetPolicy } from "./model-budget.js";
import type { TunablesResolver } from "./tunables.js";

export interface CoreDeps {
  store: Store;
  clock: Clock;
  ids: Ids;
  log: Log;
}

export interface ServiceDeps extends CoreDeps {
  events: EventPublisher;
  metrics: Metrics;
  tunables: TunablesResolver;
  /** Each tenant's daily model budget (docs/reliability.md, "Limits and budgets"). */
  budget: BudgetPolicy;
  /** Full-text index of histories, cached per container (search endpoint, recall in the context). */
  history: HistorySearch;
  /** How long a compaction lease lasts; longer than the summarizer's overall deadline. */
  leaseMs: number;
  /** Where folds are summarized (in the turn or by the worker), and the worker's timings. */
  compaction: CompactionSettings;
  /** Built lazily: handlers that never summarize never load an LLM SDK. */
  summarizer: () => Promise<Summarizer>;
}
