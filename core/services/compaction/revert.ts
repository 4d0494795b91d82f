/**
 * Undoing the newest compaction of a process (docs/compaction.md, "Undoing a compaction"): its
 * folded messages become active again in their original order, the summary it superseded is the
 * active one again, and the undone summary stays for audit as REVERTED. Same commit protocol as a
 * fold: lease, one transaction, roll forward for the rest.
 */
import { conflict, notFound } from "../../domain/errors.js";
import type { Memory, Message } from "../../domain/model.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { RANGE_MARKER_PREFIX } from "../../domain/fields.js";
import { expiredRefs } from "../../domain/retention.js";
import { replayTokens } from "../../domain/replay.js";
import { summaryBudgetFor } from "../../domain/summarizer-fit.js";
import { settledView } from "./settle.js";
import type { ServiceDeps } from "../deps.js";
import { AGAIN, AGAIN_NOW, retrying } from "./lease.js";
import { revertFold } from "./transitions.js";
import { requireProcess } from "../processes.js";

export interface RevertResult {
  memory: Memory;
  restoredMessages: number;
  activeSummaryId: string | null;
}

/**
 * How often a revert that finds a lease (a compaction summarizing) waits and tries again; one that
 * finds the state changed (a commit since its read) reads again at once.
 */
const LEASE_WAIT = { attempts: 5, waitMs: (n: number) => 50 * 2 ** n };

export async function revertMemory(deps: ServiceDeps, key: ProcessKey, memoryId: string): Promise<RevertResult> {
  return retrying(deps, LEASE_WAIT, async () => {
    const view = await settledView(deps, key);
    const memory = await deps.store.getMemory(key, memoryId);
    if (!memory) {
      await requireProcess(deps, key);
      throw notFound("memory", memoryId);
    }
    refuseUnlessNewest(memory, view);
    const outcome = await tryRevert(deps, key, view, memory);
    // Another compaction or revert holds the lease or just committed: read again (it may have
    // made this memory older or reverted it), after a short wait for a lease.
    return outcome.ok ? outcome.result : outcome.reason === "leased" ? AGAIN : AGAIN_NOW;
  }, () => conflict("process.busy", `a compaction of process '${key.processId}' is in progress; try again`));
}

function refuseUnlessNewest(memory: Memory, view: ActiveView) {
  if (memory.status === "REVERTED") throw conflict("memory.reverted", `memory '${memory.id}' is already reverted`);
  if (memory.status === "FAILED") throw conflict("memory.failed", `memory '${memory.id}' is a FAILED compaction; it changed nothing to undo`);
  if (memory.supersededAt !== null || view.state.activeSummaryId !== memory.id) {
    throw conflict("memory.not_newest", `only the newest active summary can be reverted; it is '${view.state.activeSummaryId ?? "none"}'`, {
      activeSummaryId: view.state.activeSummaryId,
    });
  }
}

type Attempt = { ok: true; result: RevertResult } | { ok: false; reason: "leased" | "changed" };

async function tryRevert(deps: ServiceDeps, key: ProcessKey, view: ActiveView, memory: Memory): Promise<Attempt> {
  const priorId = memory.metadata.supersededMemoryId ?? null;
  const [prior, folded, tunables] = await Promise.all([
    priorId ? deps.store.getMemory(key, priorId) : Promise.resolve(null),
    deps.store.getMessages(key, memory.sourceRefs),
    deps.tunables.forProcess(key.tenantId, view.state.process.projectId),
  ]);
  refuseExpiredOriginals(deps, memory, folded);
  const marker = rangeMarkerOf(memory, view.messages);
  // The replay after the undo, in the service's own estimate; automatic compaction waits until it
  // has grown by the minimum saving, or the undone fold would simply be repeated by the next turn.
  const after =
    replayTokens(view) - memory.tokens + (prior?.tokens ?? 0) + folded.reduce((n, m) => n + m.tokens, 0) - (marker?.tokens ?? 0);

  // The minimum saving: a summary of the budget every fold gets (summaryMinTokens).
  return revertFold(deps, key, view, { memory, prior, marker, holdTokens: after + summaryBudgetFor(tunables, undefined) });
}

/** Expired originals named in a refusal; the count covers them all. */
const EXPIRED_IDS_SHOWN = 100;

/**
 * A revert brings back every original or none (the service never loses a message): refused while
 * any original is gone under a retention, or would expire before the revert could finish (within
 * the lease), so the summary stays the only and replayed record of them (docs/api.md).
 */
function refuseExpiredOriginals(deps: ServiceDeps, memory: Memory, folded: readonly Message[]) {
  const expired = expiredRefs(memory.sourceRefs, folded, deps.clock.now(), deps.leaseMs);
  if (expired.length === 0) return;
  throw conflict(
    "memory.originals_expired",
    `memory '${memory.id}' cannot be reverted: ${expired.length} of its ${memory.sourceRefs.length} originals are past their retention; the summary stays`,
    { expiredCount: expired.length, expired: expired.slice(0, EXPIRED_IDS_SHOWN) },
  );
}

/**
 * The SYSTEM marker a range compaction inserted, while it is still active. Memories written before
 * the marker's id was recorded are matched by its tag and the range's time window.
 */
function rangeMarkerOf(memory: Memory, active: Message[]): Message | null {
  const md = memory.metadata;
  if (!md.recompaction) return null;
  if (md.markerMessageId) return active.find((m) => m.id === md.markerMessageId) ?? null;
  const tag = `${RANGE_MARKER_PREFIX}${md.topicLabel ?? ""}`;
  const inRange = (m: Message) =>
    (!md.rangeFromAt || m.createdAt >= md.rangeFromAt) && (!md.rangeToAt || m.createdAt <= md.rangeToAt);
  return active.filter((m) => m.role === "SYSTEM" && m.tags.includes(tag) && inRange(m)).at(-1) ?? null;
}
