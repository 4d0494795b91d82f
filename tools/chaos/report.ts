/**
 * What a chaos run reports: the counters the harness fills while it runs (faults that fired,
 * crashes, retries, compactions, offers, the inspector's controls), the violations it found, and
 * the text `npm run chaos` prints. Kept apart from the run so the report's shape and its
 * documented last line (docs/reliability.md) can be read in one place.
 */
import type { ChaosPlan } from "./plan.js";

export interface ChaosReport {
  seed: number;
  turns: number;
  engines: number;
  planDigest: string;
  tableName: string;
  /** Calls into the services: planned operations, burst members, retries, event deliveries. */
  operations: number;
  /** Faults that actually fired: store faults + summarizer faults + duplicated deliveries/appends. */
  faults: number;
  faultsByKind: Record<string, number>;
  /** Acknowledged CompactionRequested deliveries by outcome (prepared, committed, failed, skipped). */
  worker: Record<string, number>;
  crashes: number;
  restarts: number;
  retries: number;
  /**
   * Read back from the store at the end: OK memories by mode (SOFT, HARD, EMERGENCY, RANGE), FAILED
   * rows, memories whose archives did not fit one transaction (rolled forward). `backedOff`:
   * compaction calls that found a lease or a newer version and paid for no summary.
   */
  compactions: {
    committed: number;
    byMode: Record<string, number>;
    failedRows: number;
    rolledForward: number;
    backedOff: number;
    /** Background folds left at the end, by status (QUEUED, PREPARED, DISCARDED). */
    folds: Record<string, number>;
    /** Committed summaries that were prepared by the worker and committed without a model call (by a turn or the worker). */
    preparedUsed: number;
  };
  /**
   * `nothingLeft`: accepted offers whose range had already been folded by other compactions;
   * `expiredHeld`: whose range job expired while a clock jump overtook its held request.
   */
  offers: { created: number; accepted: number; declined: number; rangeCompacted: number; nothingLeft: number; expiredHeld: number; deadLettered: number };
  /** PATCHes that changed a strength, PATCHes refused with message.archived, reverts that committed. */
  controls: { pinned: number; unpinned: number; refusedArchived: number; reverted: number };
  /**
   * Stalls that began (`held`; also in the faults by kind as `stall:*`), of which `detached`: the
   * engine went on meanwhile; offers whose answers were delivered `late` (after later operations,
   * or once more after an undo of their range summary).
   */
  stalls: { held: number; detached: number; late: number };
  /**
   * Processes whose DELETE began, answered 202 at least once (the worker erased the rest), and
   * completed (a repeat answered 204); `inFlight`: the engine's calls and deliveries still running
   * or due when its delete began; `checked`: calls touching a deleted process after its delete
   * completed, each followed by the deletion check.
   */
  deletes: { started: number; background: number; completed: number; inFlight: number; checked: number };
  /**
   * The data lifecycle (tools/chaos/README.md, "Copies, expiries and erasure"): exports imported
   * into a copy and checked (`copies`), exports refused with 409 `export.changed` (`changed`),
   * clock jumps past the retention (`expiries`) and the originals the TTL then removed (`swept`),
   * reverts refused as `memory.originals_expired`, and the tenant erasures run and checked.
   */
  lifecycle: { copies: number; changed: number; expiries: number; swept: number; expiredReverts: number; erasures: number; erasedItems: number };
  /**
   * Read back at the end: messages with native content checked against what was sent, and the
   * blobs they name; provider blocks of OK and REVERTED memories read back exactly (`blocks`), of
   * them kept as a blob (`blockBlobs`) and in copies (`blockCopies`); processes whose Claude turn
   * replayed its summary's block first (`blocksReplayed`).
   */
  native: { messages: number; blobs: number; blocks: number; blockBlobs: number; blockCopies: number; blocksReplayed: number };
  violations: string[];
  durationMs: number;
}

/** Counters the report is made of; a Set so a violation seen after many operations is listed once. */
export type Stats = Pick<ChaosReport, "operations" | "crashes" | "restarts" | "retries" | "faultsByKind" | "worker" | "compactions" | "offers" | "controls" | "stalls" | "deletes" | "lifecycle" | "native"> & {
  violations: Set<string>;
  /** Processes (`tenant/process`) out of the invariants: their delete began. Their own check says "deleted process ...". */
  excluded: Set<string>;
};

export const emptyStats = (): Stats => ({
  operations: 0,
  crashes: 0,
  restarts: 0,
  retries: 0,
  faultsByKind: {},
  worker: {},
  compactions: { committed: 0, byMode: {}, failedRows: 0, rolledForward: 0, backedOff: 0, folds: {}, preparedUsed: 0 },
  offers: { created: 0, accepted: 0, declined: 0, rangeCompacted: 0, nothingLeft: 0, expiredHeld: 0, deadLettered: 0 },
  controls: { pinned: 0, unpinned: 0, refusedArchived: 0, reverted: 0 },
  stalls: { held: 0, detached: 0, late: 0 },
  deletes: { started: 0, background: 0, completed: 0, inFlight: 0, checked: 0 },
  lifecycle: { copies: 0, changed: 0, expiries: 0, swept: 0, expiredReverts: 0, erasures: 0, erasedItems: 0 },
  native: { messages: 0, blobs: 0, blocks: 0, blockBlobs: 0, blockCopies: 0, blocksReplayed: 0 },
  violations: new Set(),
  excluded: new Set(),
});

/** Counts a fault that fired, by kind (`store:<method>:<when>`, `summarizer:<outcome>`, `duplicate-*`). */
export const countFault = (stats: Stats, kind: string, n = 1) => void (stats.faultsByKind[kind] = (stats.faultsByKind[kind] ?? 0) + n);

/** Records violations, except those of a process whose delete began (they start with its `tenant/process:`). */
export const violate = (stats: Stats, list: readonly string[]) =>
  list.forEach((v) => {
    if (![...stats.excluded].some((k) => v.startsWith(`${k}:`))) stats.violations.add(v);
  });

export function toReport(plan: ChaosPlan, tableName: string, stats: Stats, startedAt: number): ChaosReport {
  return {
    seed: plan.seed,
    turns: plan.turns,
    engines: plan.engines.length,
    planDigest: plan.digest,
    tableName,
    operations: stats.operations,
    faults: Object.values(stats.faultsByKind).reduce((a, b) => a + b, 0),
    faultsByKind: stats.faultsByKind,
    worker: stats.worker,
    crashes: stats.crashes,
    restarts: stats.restarts,
    retries: stats.retries,
    compactions: stats.compactions,
    offers: stats.offers,
    controls: stats.controls,
    stalls: stats.stalls,
    deletes: stats.deletes,
    lifecycle: stats.lifecycle,
    native: stats.native,
    violations: [...stats.violations],
    durationMs: Date.now() - startedAt,
  };
}

/** The report as text; the last line is exactly `chaos: seed S, N operations, F faults, V violations`. */
export function formatReport(r: ChaosReport): string[] {
  const kinds = Object.entries(r.faultsByKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}=${n}`)
    .join(" ");
  return [
    ...r.violations.slice(0, 50).map((v) => `VIOLATION ${v}`),
    ...(r.violations.length > 50 ? [`... and ${r.violations.length - 50} more violations`] : []),
    `plan ${r.planDigest}: ${r.turns} planned operations over ${r.engines} engines, table ${r.tableName}, ${(r.durationMs / 1000).toFixed(1)} s`,
    `compactions: ${r.compactions.committed} committed (${Object.entries(r.compactions.byMode)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([m, n]) => `${m} ${n}`)
      .join(", ")}; ${r.compactions.rolledForward} rolled forward), ${r.compactions.failedRows} FAILED rows, ${r.compactions.backedOff} calls backed off`,
    `offers: ${r.offers.created} created, ${r.offers.accepted} accepted, ${r.offers.declined} declined, ${r.offers.rangeCompacted} range-compacted, ${r.offers.nothingLeft} found their range already folded, ${r.offers.expiredHeld} expired past a clock jump, ${r.offers.deadLettered} dead-lettered`,
    `controls: ${r.controls.pinned} pinned, ${r.controls.unpinned} unpinned, ${r.controls.refusedArchived} refused (archived), ${r.controls.reverted} reverted`,
    `crashes: ${r.crashes} (containers restarted: ${r.restarts}), retries: ${r.retries}`,
    `stalls: ${r.stalls.held} calls held (${r.stalls.detached} detached: the engine went on meanwhile), ${r.stalls.late} offer answers delivered late`,
    `deletes: ${r.deletes.started} started (${r.deletes.inFlight} calls or deliveries of theirs in flight), ${r.deletes.background} answers 202 (erased by the worker), ${r.deletes.completed} completed, ${r.deletes.checked} later calls checked`,
    `lifecycle: ${r.lifecycle.copies} copies checked (${r.lifecycle.changed} exports refused as changed), ${r.lifecycle.expiries} clock jumps past the retention (${r.lifecycle.swept} originals expired, ${r.lifecycle.expiredReverts} reverts refused), ${r.lifecycle.erasures} tenant erasures (${r.lifecycle.erasedItems} items)`,
    `native content: ${r.native.messages} messages read back exactly (${r.native.blobs} blobs), ${r.native.blocks} provider blocks of memories (${r.native.blockBlobs} as blobs, ${r.native.blockCopies} in copies), ${r.native.blocksReplayed} replayed first by a Claude turn`,
    `faults: ${kinds}`,
    `chaos: seed ${r.seed}, ${r.operations} operations, ${r.faults} faults, ${r.violations.length} violations`,
  ];
}
