/**
 * The compaction invariants of docs/architecture (commit protocol), checked against what the Store
 * port returns, and the stored-data invariant of native content. `findViolations` is pure over a
 * snapshot so a chaos harness can reuse it on data it read itself; the native checks read the
 * blobs (tools/native-invariants.ts); `checkInvariants` reads the snapshot and checks it in one
 * call.
 */
import { newestCommitted } from "../core/domain/memory-order.js";
import { blockViolations, nativeViolations } from "./native-invariants.js";
import { ledgerViolations } from "./ledger-invariants.js";
import type { Memory, Message } from "../core/domain/model.js";
import { expiryToIso, originalsExpiry } from "../core/domain/retention.js";
import { strengthTagOf } from "../core/domain/strength.js";
import type { ActiveView, ProcessKey, ProcessState, Store } from "../core/ports/store.js";
import type { CoreDeps } from "../core/services/deps.js";

/** Everything the invariants look at: the full history, every memory, and the replay. */
export interface Snapshot {
  key: ProcessKey;
  /** META as `getProcess` returns it; null for an unknown process. */
  state: ProcessState | null;
  /** Every message, archived included, oldest first. */
  messages: Message[];
  /** Every memory, OK and FAILED, superseded or not. */
  memories: Memory[];
  /** What one strongly consistent read of the replay returns (the sparse index). */
  view: ActiveView | null;
}

export interface InvariantOptions {
  /** Ids the caller appended: all must still exist (nothing is ever deleted). */
  appendedIds?: Iterable<string>;
  /** Ids that must still be active (anchor, triggering turn, tool groups kept whole...). */
  mustStayActive?: Iterable<string>;
  /**
   * The calls have settled: no pending archive on META, and every message a committed OK memory
   * folded is archived into it. Leave off while a crash may have left a roll-forward behind.
   */
  settled?: boolean;
  /** No compaction lease is held (after settled calls that did not crash while holding one). */
  noLease?: boolean;
  /** Also check the native content of every message and the block blob of every memory, read through these deps (their blob store). */
  native?: CoreDeps;
  /**
   * What DynamoDB's TTL removed (a clock moved past the retention): each message's id and the
   * memory it was archived into then. Such a message may be missing from that memory's sources
   * and from `appendedIds`; from any other memory, and from a memory reverted since, it may not.
   */
  expired?: ReadonlyMap<string, string | null>;
}

/**
 * Whether `ref`, missing, was removed by the TTL as `memory`'s original: an OK memory keeps its
 * expired originals' ids; any other memory that lists one the TTL removed while archived into it
 * was reverted without it.
 */
export function expiredAway(expired: ReadonlyMap<string, string | null> | undefined, ref: string, memory: Pick<Memory, "id" | "status">): boolean {
  if (!expired?.has(ref)) return false;
  return memory.status === "OK" ? expired.get(ref) === memory.id : expired.get(ref) !== memory.id;
}

/** Pages `listMessages` to the end, so a large history is read completely. */
export async function readAllMessages(store: Store, key: ProcessKey, pageSize = 250): Promise<Message[]> {
  const all: Message[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listMessages(key, { limit: pageSize, ...(cursor ? { cursor } : {}) });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/**
 * Reads a {@link Snapshot} through the Store port (messages paged, every memory, the replay). The
 * reads are separate requests, not one snapshot: call it while no compaction is in flight.
 */
export async function readAll(store: Store, key: ProcessKey): Promise<Snapshot> {
  const [state, messages, memories, view] = await Promise.all([
    store.getProcess(key),
    readAllMessages(store, key),
    store.listMemories(key),
    store.activeView(key),
  ]);
  return { key, state, messages, memories, view };
}

const isPinned = (m: Message) => strengthTagOf(m.tags) === "pinned";
const byId = <T extends { id: string }>(items: readonly T[]) => new Map(items.map((i) => [i.id, i] as const));
const sameIds = (a: readonly string[], b: readonly string[]) => {
  const [x, y] = [[...a].sort(), [...b].sort()];
  return x.length === y.length && x.every((id, i) => id === y[i]);
};

/**
 * Human-readable violations of the invariants in `snapshot`; empty when all hold.
 *
 * @example expect(findViolations(await readAll(store, key), { settled: true })).toEqual([])
 */
export function findViolations(snapshot: Snapshot, options: InvariantOptions = {}): string[] {
  const v: string[] = [];
  const { state, messages, memories, view } = snapshot;
  const where = `${snapshot.key.tenantId}/${snapshot.key.processId}`;
  if (!state || !view) return [`${where}: process not found`];

  const memoryById = byId(memories);
  const messageById = byId(messages);
  const okMemories = memories.filter((m) => m.status === "OK");
  const active = okMemories.filter((m) => m.supersededAt === null);

  // At most one active summary per process: the head of the chain, the summary committed last.
  // "Last" is the chain's order, not the ids': a background job commits under the id it was
  // queued with, which can be older than a fold that committed while it waited.
  if (active.length > 1) v.push(`${active.length} active summaries: ${active.map((m) => m.id).join(", ")}`);
  if (okMemories.length > 0 && active.length === 0) v.push(`every OK memory is superseded: no summary heads the chain`);
  const head = active.length === 1 ? active[0]! : undefined;
  if (head) {
    const reached = new Set<string>();
    for (let m: Memory | undefined = head; m && m.status === "OK" && !reached.has(m.id); ) {
      reached.add(m.id);
      const prior: string | undefined = m.metadata.supersededMemoryId;
      m = prior === undefined ? undefined : memoryById.get(prior);
    }
    const off = okMemories.filter((m) => !reached.has(m.id)).map((m) => m.id);
    if (off.length > 0) v.push(`OK memories off the chain that ends in ${head.id}: ${off.join(", ")}`);
  }
  for (const m of memories) {
    if (m.status !== "OK" && m.supersededByMemoryId !== undefined) v.push(`${m.status} memory ${m.id} takes part in the chain`);
    if (m.status === "FAILED" && m.metadata.error === undefined) v.push(`FAILED memory ${m.id} has no metadata.error`);
  }

  // The replay shows the head; META names it.
  if (view.summaries.some((s) => s.status !== "OK")) v.push(`the replay contains a ${view.summaries.find((s) => s.status !== "OK")!.status} memory`);
  if (!sameIds(view.summaries.map((s) => s.id), active.map((m) => m.id))) {
    v.push(`replay summaries [${view.summaries.map((s) => s.id)}] differ from active memories [${active.map((m) => m.id)}]`);
  }
  // With two active summaries (already reported), META should name the one committed last.
  const named = head ?? newestCommitted(active);
  if ((state.activeSummaryId ?? null) !== (named?.id ?? null)) {
    v.push(`META.activeSummaryId is ${state.activeSummaryId ?? "null"}, the head of the chain is ${named?.id ?? "none"}`);
  }

  // Background folds (QUEUED, PREPARED, DISCARDED) are never replayed; the index holds exactly the
  // queued and prepared ones, and nothing was ever archived into them (checked below).
  const pending = memories.filter((m) => m.status === "QUEUED" || m.status === "PREPARED").map((m) => m.id);
  if (!sameIds(view.folds.map((f) => f.id), pending)) v.push(`pending folds in the index [${view.folds.map((f) => f.id)}] differ from QUEUED/PREPARED memories [${pending}]`);

  // The chain never forks: no two OK memories start it.
  const starts = okMemories.filter((m) => m.metadata.supersededMemoryId === undefined).map((m) => m.id);
  if (starts.length > 1) v.push(`the chain forks at (start): ${starts.join(", ")}`);

  // The supersede chain is navigable both ways.
  for (const m of okMemories) {
    if (m.supersededAt !== null) {
      const next = m.supersededByMemoryId ? memoryById.get(m.supersededByMemoryId) : undefined;
      if (!next) v.push(`superseded memory ${m.id} points to missing successor ${m.supersededByMemoryId ?? "(none)"}`);
      else if (next.metadata.supersededMemoryId !== m.id) {
        v.push(`successor ${next.id} of ${m.id} names ${next.metadata.supersededMemoryId ?? "no"} predecessor`);
      }
    } else if (m.supersededByMemoryId !== undefined) v.push(`memory ${m.id} has supersededByMemoryId but no supersededAt`);
    const prior = m.metadata.supersededMemoryId;
    if (prior !== undefined) {
      const p = memoryById.get(prior);
      if (!p) v.push(`memory ${m.id} supersedes missing memory ${prior}`);
      else if (p.supersededByMemoryId !== m.id) v.push(`memory ${prior} is not marked superseded by its successor ${m.id}`);
    }
  }

  // The chain never forks: no two OK memories supersede the same one (a REVERTED one is off the chain).
  const successors = new Map<string, string>();
  for (const m of okMemories) {
    const prior = m.metadata.supersededMemoryId;
    if (prior === undefined) continue;
    const other = successors.get(prior);
    if (other) v.push(`the chain forks: ${other} and ${m.id} both supersede ${prior}`);
    successors.set(prior, m.id);
  }

  // Every message is active or archived into an OK memory that exists and folded it, and whose
  // supersede chain (supersededByMemoryId, through OK memories only) leads to the active summary:
  // the replayed summary covers it. Only a reverted range compaction's marker is archived into its
  // REVERTED memory.
  const leadsToActive = chainCheck(memoryById, state.activeSummaryId);
  for (const msg of messages) {
    const into = msg.archivedInMemoryId;
    // Retention (docs/configuration.md): only an archived original ever carries an expiry.
    if (into === null) {
      if (msg.expiresAt !== undefined) v.push(`active message ${msg.id} carries an expiry (${msg.expiresAt})`);
      continue;
    }
    if (isPinned(msg)) v.push(`pinned message ${msg.id} was archived into ${into}`);
    const memory = memoryById.get(into);
    if (!memory) {
      v.push(`message ${msg.id} is archived into missing memory ${into}`);
      continue;
    }
    if (memory.status === "REVERTED") {
      // An undo whose restores did not all fit its transaction: META names it until the next
      // reader has restored the rest (docs/compaction.md, "The commit protocol"). Settled, never.
      const restoring = !options.settled && state.pendingArchive === into;
      if (memory.metadata.markerMessageId !== msg.id && !restoring) v.push(`message ${msg.id} is archived into REVERTED memory ${into}`);
      continue;
    }
    // The expiry its fold's retention gives, from the archive's own write (none without one).
    const expiry = memory.status === "OK" ? originalsExpiry(memory) : undefined;
    if (msg.expiresAt !== (expiry === undefined ? undefined : expiryToIso(expiry))) {
      v.push(`message ${msg.id} archived into ${into} expires at ${msg.expiresAt ?? "never"}, its fold's retention says ${expiry === undefined ? "never" : expiryToIso(expiry)}`);
    }
    if (memory.status !== "OK") v.push(`message ${msg.id} is archived into ${memory.status} memory ${into}`);
    else if (!leadsToActive(memory)) {
      v.push(`message ${msg.id} is archived into ${into}, whose supersede chain does not lead to the active summary ${state.activeSummaryId ?? "(none)"}`);
    }
    if (!inSourceChain(msg.id, memory, memoryById)) v.push(`message ${msg.id} is archived into ${into}, whose sourceRefs chain does not list it`);
  }

  // Index consistency: the replay holds exactly the unarchived messages.
  const activeIds = messages.filter((m) => m.archivedInMemoryId === null).map((m) => m.id);
  if (!sameIds(view.messages.map((m) => m.id), activeIds)) {
    v.push(`replay messages (${view.messages.length}) differ from unarchived history messages (${activeIds.length})`);
  }

  for (const id of options.appendedIds ?? []) {
    if (!messageById.has(id) && !options.expired?.has(id)) v.push(`message ${id} was appended but is gone`);
  }
  for (const id of options.mustStayActive ?? []) {
    const m = messageById.get(id);
    if (m && m.archivedInMemoryId !== null) v.push(`message ${id} must stay active but was archived into ${m.archivedInMemoryId}`);
  }

  if (options.settled) {
    if (state.pendingArchive !== null) v.push(`pending archive of ${state.pendingArchive} left on META`);
    // After settling, exactly the messages of reverted summaries are no longer archived into them.
    for (const m of memories.filter((x) => x.status === "REVERTED")) {
      for (const ref of m.sourceRefs) {
        const msg = messageById.get(ref);
        if (!msg) {
          if (!expiredAway(options.expired, ref, m)) v.push(`reverted memory ${m.id} folded ${ref}, which does not exist`);
        }
        else if (msg.archivedInMemoryId === m.id) v.push(`reverted memory ${m.id} still holds ${ref} archived`);
      }
    }
    for (const m of okMemories) {
      for (const ref of m.sourceRefs) {
        const msg = messageById.get(ref);
        if (!msg) {
          if (!expiredAway(options.expired, ref, m)) v.push(`memory ${m.id} folded ${ref}, which does not exist`);
        }
        else if (msg.archivedInMemoryId !== m.id) {
          v.push(`memory ${m.id} folded ${ref}, which is ${msg.archivedInMemoryId ? `archived into ${msg.archivedInMemoryId}` : "still active"}`);
        }
      }
    }
  }
  v.push(...ledgerViolations(okMemories, memoryById, messageById, options.expired));
  if (options.noLease && state.lease !== null) v.push(`lease held by ${state.lease.owner} until ${state.lease.until}`);
  return v.map((text) => `${where}: ${text}`);
}

/**
 * Whether following supersededByMemoryId from an OK memory, through OK memories only, ends at
 * `activeId` (the summary META names). Memoized per memory: every archived message asks.
 */
function chainCheck(memoryById: Map<string, Memory>, activeId: string | null): (memory: Memory) => boolean {
  const known = new Map<string, boolean>();
  return (start) => {
    const path = new Set<string>();
    let ok = false;
    for (let m: Memory | undefined = start; ; ) {
      const cached = known.get(m.id);
      if (cached !== undefined) {
        ok = cached;
        break;
      }
      if (m.status !== "OK" || path.has(m.id)) break;
      path.add(m.id);
      if (m.supersededAt === null) {
        ok = m.id === activeId;
        break;
      }
      m = memoryById.get(m.supersededByMemoryId ?? "");
      if (!m) break;
    }
    for (const id of path) known.set(id, ok);
    return ok;
  };
}

/** The memory itself or one of its predecessors (metadata.supersededMemoryId) lists the message. */
function inSourceChain(messageId: string, memory: Memory, memoryById: Map<string, Memory>): boolean {
  const seen = new Set<string>();
  for (let m: Memory | undefined = memory; m && !seen.has(m.id); m = memoryById.get(m.metadata.supersededMemoryId ?? "")) {
    seen.add(m.id);
    if (m.sourceRefs.includes(messageId)) return true;
  }
  return false;
}

/**
 * Reads everything of one process through `store` and returns the violated invariants.
 *
 * @example expect(await checkInvariants(store, key, { appendedIds, settled: true })).toEqual([])
 */
export async function checkInvariants(store: Store, key: ProcessKey, options: InvariantOptions = {}): Promise<string[]> {
  const snapshot = await readAll(store, key);
  const native = options.native ? [...(await nativeViolations(options.native, key, snapshot.messages)), ...(await blockViolations(options.native, key, snapshot.memories))] : [];
  return [...findViolations(snapshot, options), ...native];
}
