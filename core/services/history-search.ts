/**
 * History search and recall (audit): ranks every message of a process, archived ones included,
 * and leads from a memory back to the originals it folded. The index is built per container and
 * cached per process; see docs/features.md, "History search and recall", for where this stops scaling.
 */
import { Lru } from "./lru.js";
import { createHistoryIndex, type HistoryIndex } from "../domain/search-index.js";
import { notFound } from "../domain/errors.js";
import type { Message } from "../domain/model.js";
import { expiredRefs, isExpired, keptAt } from "../domain/retention.js";
import type { ProcessKey } from "../ports/store.js";
import type { CoreDeps, HistorySearch, HistorySearchStats, SearchResultItem } from "./deps.js";
import { requireProcess } from "./processes.js";

export interface HistorySearchOptions {
  /** Processes whose index stays cached (least recently used goes first). */
  maxProcesses?: number;
  /** Messages indexed across all cached processes (~1-2 KB of heap each); a larger process is indexed but not kept. */
  maxMessages?: number;
  /** Page size of a full history read. */
  pageSize?: number;
  /** Page size at the tail, which every search re-reads to pick up new messages. */
  tailPageSize?: number;
}

/** Searches of one query at most, when read-backs find expired hits (each round drops them). */
const SEARCH_ROUNDS = 3;

interface Entry {
  index: HistoryIndex;
  /** META.version when built: every compaction bumps it, and only compactions insert mid-history (range markers). */
  version: number;
  count: number;
  lastId: string | null;
  /** Cursor that starts the last non-empty small page (undefined: from the beginning). */
  tailCursor: string | undefined;
}

/**
 * One per container (built by the composition root, core/composition/create-deps.ts).
 *
 * @example
 * const history = createHistorySearch({ maxProcesses: 20 });
 * await history.search(deps, { tenantId, processId }, { q: "migration", limit: 10 });
 */
export function createHistorySearch(options: HistorySearchOptions = {}): HistorySearch {
  const maxProcesses = options.maxProcesses ?? 32;
  const maxMessages = options.maxMessages ?? 100_000;
  const pageSize = options.pageSize ?? 1000;
  const tailPageSize = options.tailPageSize ?? 100;
  const stats: HistorySearchStats = { builds: 0, extended: 0, hits: 0, evictions: 0 };
  // At most `maxProcesses` indexes holding `maxMessages` messages in all, least recently used out
  // first. An index larger than the whole budget is not kept.
  const cache = new Lru<string, Entry>({
    maxEntries: maxProcesses,
    maxWeight: maxMessages,
    weigh: (entry) => entry.count,
    onEvict: () => stats.evictions++,
  });
  const queues = new Map<string, Promise<unknown>>();

  const cacheKey = (key: ProcessKey) => JSON.stringify([key.tenantId, key.processId]);

  /** Reads from `cursor` to the end; `tailCursor` starts the last page that had items. */
  async function readFrom(deps: CoreDeps, key: ProcessKey, cursor: string | undefined, limit: number) {
    const messages: Message[] = [];
    let tailCursor = cursor;
    let next = cursor;
    let lastPage = 0;
    do {
      const page = await deps.store.listMessages(key, { limit, ...(next ? { cursor: next } : {}) });
      if (page.items.length > 0) {
        tailCursor = next;
        lastPage = page.items.length;
        messages.push(...page.items);
      }
      next = page.nextCursor;
    } while (next);
    return { messages, tailCursor, lastPage };
  }

  async function build(deps: CoreDeps, key: ProcessKey, version: number): Promise<Entry> {
    stats.builds++;
    const full = await readFrom(deps, key, undefined, pageSize);
    let tailCursor = full.tailCursor;
    // Narrow the tail once, so that each later search re-reads at most `tailPageSize` messages.
    if (full.lastPage > tailPageSize) tailCursor = (await readFrom(deps, key, tailCursor, tailPageSize)).tailCursor;
    const last = full.messages[full.messages.length - 1];
    // What has expired is not indexed at all: its text never sits in this container's cache.
    return { index: createHistoryIndex(keptAt(full.messages, deps.clock.now())), version, count: full.messages.length, lastId: last?.id ?? null, tailCursor };
  }

  async function extend(deps: CoreDeps, key: ProcessKey, entry: Entry): Promise<void> {
    const tail = await readFrom(deps, key, entry.tailCursor, tailPageSize);
    const fresh = tail.messages.filter((m) => entry.lastId === null || m.id > entry.lastId);
    if (fresh.length === 0) {
      stats.hits++;
      return;
    }
    stats.extended++;
    entry.index.add(fresh);
    entry.count += fresh.length;
    entry.lastId = fresh[fresh.length - 1]!.id;
    entry.tailCursor = tail.tailCursor;
  }

  /** (Re)stores an entry as the most recently used, with its size as it is now (it grows in place). */
  function remember(k: string, entry: Entry) {
    cache.set(k, entry);
  }

  /** Searches of one process run one after another, so the cached entry is extended once per change. */
  function serialized<T>(k: string, run: () => Promise<T>): Promise<T> {
    const result = (queues.get(k) ?? Promise.resolve()).then(run, run);
    const settled = result.catch(() => undefined);
    queues.set(k, settled);
    void settled.then(() => queues.get(k) === settled && queues.delete(k));
    return result;
  }

  async function freshIndex(deps: CoreDeps, key: ProcessKey): Promise<HistoryIndex> {
    const k = cacheKey(key);
    return serialized(k, async () => {
      // Also the tenant check: another tenant's process has no META under this tenant's key. A
      // deleted process has none either (docs/api.md, "Deleting a process"): its cached index is
      // dropped here, so no container answers from it.
      const state = await requireProcess(deps, key).catch((e: unknown) => {
        cache.delete(k);
        throw e;
      });
      let entry = cache.get(k);
      if (entry && entry.version === state.version) await extend(deps, key, entry);
      else entry = await build(deps, key, state.version);
      remember(k, entry);
      return entry.index;
    });
  }

  return {
    async search(deps, key, query) {
      const index = await freshIndex(deps, key);
      const now = deps.clock.now();
      // An original archived after the index was built may have expired unseen: a read-back that
      // finds one drops it from the index and searches again, so the answer still fills `limit`.
      for (let round = 1; ; round++) {
        const hits = index.search(query, now);
        if (hits.length === 0) return { items: [] };
        // Read the hits back rather than serving cached copies: archiving changes a message after it was indexed.
        const byId = new Map((await deps.store.getMessages(key, hits.map((h) => h.id))).map((m) => [m.id, m]));
        const gone = hits.filter((h) => !byId.has(h.id) || isExpired(byId.get(h.id)!, now)).map((h) => h.id);
        index.remove(gone);
        if (gone.length > 0 && round < SEARCH_ROUNDS) continue;
        const items: SearchResultItem[] = [];
        for (const h of hits) {
          const message = byId.get(h.id);
          if (message && !isExpired(message, now)) items.push({ message, score: Math.round(h.score * 1e4) / 1e4 });
        }
        return { items };
      }
    },

    async sources(deps, key, memoryId) {
      const memory = await deps.store.getMemory(key, memoryId);
      if (!memory) {
        await requireProcess(deps, key);
        throw notFound("memory", memoryId);
      }
      const now = deps.clock.now();
      const found = await deps.store.getMessages(key, memory.sourceRefs);
      // docs/api.md: the originals a retention removed are named, the summary itself stays.
      return { memory, items: keptAt(found, now), expired: expiredRefs(memory.sourceRefs, found, now) };
    },

    stats: () => ({ ...stats }),
  };
}
