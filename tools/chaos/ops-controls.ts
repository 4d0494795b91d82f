/**
 * The inspector's controls as an engine's user would use them mid-run: pin or unpin a message
 * (PATCH strength) and undo the newest compaction. Both must either apply or be refused for a
 * stated reason; anything else is a violation.
 */
import { AppError } from "../../core/domain/errors.js";
import { isExpired } from "../../core/domain/retention.js";
import { setMessageStrength } from "../../core/services/messages.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { readAllMessages } from "../invariants.js";
import { attempt, unexpected, type RunningOp } from "./attempt.js";
import { expectedSummary } from "./checks.js";
import type { OpSpec } from "./plan.js";
import { violate } from "./report.js";
import { busy, where, type ChaosRun, type Engine } from "./run-state.js";

/** Pins or unpins a message; an archived one must answer 409 message.archived and stay unchanged. */
export async function runPin(run: ChaosRun, e: Engine, op: RunningOp, spec: Extract<OpSpec, { kind: "pin" }>) {
  const shared = busy(e) || op.hold !== undefined;
  const history = await readAllMessages(run.inner, e.key);
  if (history.length === 0) return;
  const target = history[Math.floor(spec.messageFrac * (history.length - 1))]!;
  // The pin meets no fault, but may be held (a stall).
  const out = await attempt(run, e, { fault: null, summarizer: [], stall: op.stall, hold: op.hold }, (deps) =>
    setMessageStrength(deps, e.key, target.id, spec.strength),
  );
  if (out.ok) {
    run.stats.controls[spec.strength ? "pinned" : "unpinned"]++;
    e.reweighed.add(target.id);
    if (spec.strength) e.pinned.add(target.id);
    else e.pinned.delete(target.id);
    // Unpinned, it may be folded at once by whatever of the engine runs meanwhile; pinned, never.
    const stored = (await run.inner.getMessages(e.key, [target.id]))[0];
    if (stored?.archivedInMemoryId && (spec.strength || !shared)) {
      violate(run.stats, [`${where(e)}: ${target.id} was ${spec.strength ? "pinned" : "unpinned"} but is archived into ${stored.archivedInMemoryId}`]);
    }
  } else if (out.error instanceof AppError && out.error.code === "message.archived") {
    run.stats.controls.refusedArchived++;
    // A revert running meanwhile may have restored it since (then the answer was right when given).
    if (!shared && target.archivedInMemoryId === null && !(await run.inner.getMessages(e.key, [target.id]))[0]?.archivedInMemoryId) {
      violate(run.stats, [`${where(e)}: PATCH of active message ${target.id} answered message.archived`]);
    }
  } else if (out.error instanceof AppError && out.error.code === "message.not_found" && isExpired(target, e.container.deps.clock.now())) {
    // An original past its retention (archived, so never pinned) is gone for every read, before the TTL removes it.
    run.stats.controls.refusedArchived++;
  } else unexpected(run, e, "pin", out.error);
}

/**
 * Reverts the active summary; losing to nothing else is a violation, unless something of the
 * engine ran meanwhile (a detached op, a late delivery), which may have folded again first.
 */
export async function runRevert(run: ChaosRun, e: Engine, op: RunningOp) {
  const shared = busy(e) || op.hold !== undefined;
  const active = expectedSummary(await run.inner.listMemories(e.key));
  if (!active) return;
  const out = await attempt(run, e, op, (deps) => revertMemory(deps, e.key, active.id));
  if (out.ok) {
    run.stats.controls.reverted++;
    return;
  }
  // A crash mid-revert may have committed it; a held lease (left by a crash) makes it busy.
  if (out.error instanceof AppError && ["memory.reverted", "process.busy"].includes(out.error.code)) return;
  // Past the retention (the clock moved, ops-lifecycle.ts) an undo is refused whole.
  if (out.error instanceof AppError && out.error.code === "memory.originals_expired" && run.clockAheadMs > 0) {
    run.stats.lifecycle.expiredReverts++;
    return;
  }
  if (shared && out.error instanceof AppError && out.error.code === "memory.not_newest") return;
  unexpected(run, e, "revert", out.error);
}
