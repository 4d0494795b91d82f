/**
 * The real services wired for a benchmark: the composition root's `createDeps` over an
 * instrumented DynamoDB store, silent logs and metrics, no event bus, the offline summarizer (or a
 * given one), and optionally a replay clock. Plus deterministic synthetic messages and items.
 */
import { monotonicFactory } from "ulidx";
import { createDynamoStore, memoryToItem, messageToItem } from "../../core/adapters/dynamodb/store.js";
import { createOfflineSummarizer } from "../../core/adapters/llm/offline-summarizer.js";
import { silentLog } from "../../core/adapters/log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import type { Memory, Message, Role } from "../../core/domain/model.js";
import { estimateTokens, messageTokens } from "../../core/domain/tokens.js";
import type { Clock } from "../../core/ports/clock.js";
import type { ActiveView, ProcessKey, Store } from "../../core/ports/store.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { createDeps } from "../../core/composition/create-deps.js";
import type { BenchTable } from "./dynamo.js";
import type { ServiceCode } from "./service-code.js";

export interface ActiveViewObservation {
  ms: number;
  consumedCapacity: number;
  itemsRead: number;
}

/** The store, with every `activeView` call's latency, capacity and item count remembered. */
export function observedStore(t: BenchTable): { store: Store; activeViews: ActiveViewObservation[] } {
  const inner = createDynamoStore({ client: t.client, tableName: t.tableName });
  const activeViews: ActiveViewObservation[] = [];
  const store: Store = {
    ...inner,
    async activeView(key: ProcessKey): Promise<ActiveView | null> {
      const start = performance.now();
      const view = await inner.activeView(key);
      activeViews.push({
        ms: performance.now() - start,
        consumedCapacity: view?.consumedCapacity ?? Number.NaN,
        itemsRead: view?.itemsRead ?? Number.NaN,
      });
      return view;
    },
  };
  return { store, activeViews };
}

/** `code`: another commit's service modules (./service-code.ts) in place of this tree's. */
export function benchDeps(options: { store: Store; clock?: Clock; summarizer?: Summarizer; env?: Record<string, string>; code?: ServiceCode }): ServiceDeps {
  const summarizer = options.summarizer ?? (options.code?.createOfflineSummarizer ?? createOfflineSummarizer)();
  const deps = (options.code?.createDeps ?? createDeps)({
    // Only the fold target, the summary's and the ledger's shares pass through, so
    // `COMPACTION_FOLD_TARGET=0.5 npm run bench` or `SUMMARY_WINDOW_SHARE=0` compares them.
    env: {
      ...(process.env.COMPACTION_FOLD_TARGET ? { COMPACTION_FOLD_TARGET: process.env.COMPACTION_FOLD_TARGET } : {}),
      ...(process.env.SUMMARY_WINDOW_SHARE ? { SUMMARY_WINDOW_SHARE: process.env.SUMMARY_WINDOW_SHARE } : {}),
      ...(process.env.LEDGER_WINDOW_SHARE ? { LEDGER_WINDOW_SHARE: process.env.LEDGER_WINDOW_SHARE } : {}),
      ...options.env,
    },
    store: options.store,
    log: silentLog,
    metrics: createRecordingMetrics(),
    events: { publish: async () => {} },
    summarizerFactory: async () => summarizer,
  });
  return options.clock ? { ...deps, clock: options.clock } : deps;
}

// ---------------------------------------------------------------------------------------------
// Deterministic synthetic content.

/** The chaos harness's seeded PRNG (mulberry32), so every run seeds the same bytes. */
export { mulberry32 as prng } from "../../tools/chaos/rng.js";

const WORDS = (
  "the deploy pipeline failed again on the staging cluster because the migration script expects " +
  "a column that the previous release dropped so we need to restore it before Friday and tell " +
  "Maria in the platform team about the rollback plan budget of 4200 euros for the vendor review " +
  "invoice numbers tests pass locally but the integration suite times out after 30 seconds when " +
  "DynamoDB throttles writes consider batching the archive updates and caching the tenant settings " +
  "customer asked whether exports include archived messages answer yes with a signed URL valid " +
  "for 15 minutes open question who owns the alerting runbook decision use the offline summarizer"
).split(" ");

/** About `chars` characters of plausible chat text. */
export function syntheticText(rand: () => number, chars: number): string {
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    const sentence: string[] = [];
    const words = 6 + Math.floor(rand() * 14);
    for (let i = 0; i < words; i++) sentence.push(WORDS[Math.floor(rand() * WORDS.length)]!);
    const text = sentence.join(" ");
    const s = `${text[0]!.toUpperCase()}${text.slice(1)}.`;
    out.push(s);
    length += s.length + 1;
  }
  return out.join(" ");
}

/** Message ids in creation order at given times (ULIDs, like the service's own). */
export function idFactory(prefix: "msg" | "mem") {
  const next = monotonicFactory();
  return (at: Date) => `${prefix}_${next(at.getTime())}`;
}

export function makeMessage(
  key: ProcessKey,
  id: string,
  at: Date,
  role: Role,
  content: string,
  options: { tags?: string[]; archivedInMemoryId?: string | null } = {},
): Message {
  const draft = {
    id,
    processId: key.processId,
    role,
    content,
    tags: options.tags ?? [],
    createdAt: at.toISOString(),
    archivedInMemoryId: options.archivedInMemoryId ?? null,
  };
  return { ...draft, tokens: messageTokens(draft) };
}

export function makeSummary(key: ProcessKey, id: string, at: Date, content: string, sourceRefs: string[], supersededBy?: { id: string; at: string }): Memory {
  return {
    id,
    processId: key.processId,
    kind: "ARCHIVED_CHAT",
    status: "OK",
    content,
    sourceRefs,
    metadata: { compactedMessages: sourceRefs.length, provider: "offline", model: "offline-extractive-v1", mode: "HARD" },
    createdAt: at.toISOString(),
    supersededAt: supersededBy?.at ?? null,
    ...(supersededBy ? { supersededByMemoryId: supersededBy.id } : {}),
    tokens: estimateTokens(content),
  };
}

/** Stored items built with the store's own item builders (archived ones get `archivedAt` too). */
export function messageItem(key: ProcessKey, m: Message): Record<string, unknown> {
  const item: Record<string, unknown> = { ...messageToItem(key, m) };
  if (m.archivedInMemoryId) item.archivedAt = m.createdAt;
  return item;
}

export const summaryItem = (key: ProcessKey, m: Memory): Record<string, unknown> => ({ ...memoryToItem(key, m) });
