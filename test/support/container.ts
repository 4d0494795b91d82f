/**
 * One service container over a test table, as the integration tests build it: the real
 * composition (`createDeps`) with a scripted summarizer, recording metrics, an in-memory log and
 * the in-process bus; with `worker`, the compaction worker subscribed to the bus as the local
 * runner does. A test changes what it needs (env, summarizer, clock) and nothing else.
 */
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import { createLocalBus } from "../../core/adapters/events/local-bus.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { EVENTS } from "../../core/domain/events.js";
import type { Clock } from "../../core/ports/clock.js";
import type { EventPublisher } from "../../core/ports/events.js";
import type { Store } from "../../core/ports/store.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { createFakeSummarizer, type FakeSummarizer } from "./fake-summarizer.js";
import { createMemoryLog } from "./memory-log.js";

export interface ContainerOptions {
  store: Store;
  env?: Record<string, string> | undefined;
  /** The fake summarizer to script (default: a fresh one); every fold calls it unless `summarizer` is set. */
  fake?: FakeSummarizer | undefined;
  /** Another summarizer every fold calls (a provider adapter, the offline one, a chaos one). */
  summarizer?: Summarizer | undefined;
  /** The bus's redelivery delays (default: the bus's own, 1 s and 5 s). */
  retryDelaysMs?: number[] | undefined;
  /** Where events go instead of the bus (a publisher that fails, or records on its own). */
  events?: EventPublisher | undefined;
  /** Deliver `CompactionRequested` to the worker, as the local runner does; its outcomes in `worked`. */
  worker?: boolean | undefined;
  /** The worker waits for this before each delivery: a test holds it to see what a turn alone did. */
  workerWaits?: (() => Promise<void>) | undefined;
  clock?: Clock | undefined;
}

export function testContainer(o: ContainerOptions) {
  const fake = o.fake ?? createFakeSummarizer();
  const summarizer = o.summarizer ?? fake;
  const metrics = createRecordingMetrics();
  const log = createMemoryLog();
  const bus = createLocalBus(undefined, o.retryDelaysMs ? { retryDelaysMs: o.retryDelaysMs } : {});
  const deps = createDeps({ env: o.env ?? {}, store: o.store, events: o.events ?? bus, metrics, log, summarizerFactory: async () => summarizer });
  if (o.clock) deps.clock = o.clock;
  const worked: unknown[] = [];
  if (o.worker) {
    bus.subscribe(EVENTS.CompactionRequested, async (e) => {
      await o.workerWaits?.();
      worked.push(await handleCompactionRequested(deps, e.detail));
    });
  }
  /** The events of one kind the container published, oldest first. */
  const published = (name: keyof typeof EVENTS) => bus.published().filter((e) => e.detailType === EVENTS[name].detailType);
  /** The `CompactionRequested` detail published for a fold. */
  const requestFor = (foldId: string) => published("CompactionRequested").find((e) => e.detail.foldId === foldId)!.detail;
  return { deps, fake, metrics, log, bus, worked, published, requestFor };
}
