/**
 * The single-call operations an engine runs (append, turn, compact, range, context, a replayed
 * roll-forward), alone or as
 * members of a concurrent burst. Each one records what the caller saw acknowledged in the
 * engine's ledger and checks what it can check right away: a turn's own message is stored and
 * active, a compaction spared its anchor, a quiet process replays exactly what is stored.
 * Concurrent members skip the checks that need a process nobody else is writing.
 */
import type { Message } from "../../core/domain/model.js";
import type { CompactionResult } from "../../core/domain/compaction-result.js";
import { originalsExpiry } from "../../core/domain/retention.js";
import type { ActiveView } from "../../core/ports/store.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import { composeContext } from "../../core/services/context.js";
import { appendMessage } from "../../core/services/messages.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { runTurn } from "../../core/services/turn.js";
import { plainPrompt, requestBreak } from "../prefix-check.js";
import { readAllMessages } from "../invariants.js";
import { attempt, NO_FAULTS, unexpected, withRetry, type OpFaults } from "./attempt.js";
import { ack, activeSetViolations, anchorViolations, expectedBlock, expectedSummary, replayViolations } from "./checks.js";
import { NONCE_TAG, type BurstMember, type OpPlan, type OpSpec, type Prompt } from "./plan.js";
import { countFault, violate } from "./report.js";
import { engineBody } from "./native-messages.js";
import { appendBody, busy, where, type ChaosRun, type Container, type Engine } from "./run-state.js";

/** A lease held or a newer version seen: the call paid for no summary and left the work to another. */
const BACKED_OFF = /in_progress|concurrent|conflict/;

const request = (prompt: Prompt): Pick<CompactionRequest, "model" | "prompt"> => ({
  model: { contextWindow: prompt.contextWindow },
  ...(prompt.ratio === null ? {} : { prompt: { tokens: Math.round(prompt.ratio * prompt.contextWindow) } }),
});

/** The active view an op starts from, when nothing else can write meanwhile and nothing is pending. */
async function viewBefore(run: ChaosRun, e: Engine, concurrent: boolean): Promise<ActiveView | null> {
  if (concurrent) return null;
  const view = await run.inner.activeView(e.key);
  return view && view.state.pendingArchive === null ? view : null;
}

/** Counts a compaction result and checks its anchor against the view it started from. */
async function sawCompaction(run: ChaosRun, e: Engine, result: CompactionResult, before: ActiveView | null, extra: Message | null) {
  if (result.memoryId) e.memories.add(result.memoryId);
  if (!result.compacted) {
    if (result.reason && BACKED_OFF.test(result.reason)) run.stats.compactions.backedOff++;
    return;
  }
  const memory = result.memoryId ? await run.inner.getMemory(e.key, result.memoryId) : null;
  if (!memory) return violate(run.stats, [`${where(e)}: compaction reported memory ${result.memoryId}, which does not exist`]);
  if (before && result.mode !== "NONE") {
    const messages = extra && !before.messages.some((m) => m.id === extra.id) ? [...before.messages, extra] : before.messages;
    violate(run.stats, anchorViolations(e.key, messages, memory, result.mode, run.tunables.get(e.key.tenantId)!));
  }
}

type Simple<K extends BurstMember["spec"]["kind"]> = Extract<BurstMember["spec"], { kind: K }>;

/**
 * Runs one single-call op; `container` is a burst member's sibling container (default: the
 * engine's own). `concurrent`: a burst member (not retried). The checks that need a quiet process
 * also skip an op that runs detached or while something of the engine runs in the background.
 */
export async function runSimple(run: ChaosRun, e: Engine, faults: OpFaults, spec: BurstMember["spec"], concurrent: boolean, container?: Container) {
  const shared = concurrent || busy(e) || faults.hold !== undefined;
  switch (spec.kind) {
    case "append":
      return runAppend(run, e, faults, spec, concurrent, container);
    case "turn":
      return runTurnOp(run, e, faults, spec, concurrent, shared, container);
    case "compact": {
      const before = await viewBefore(run, e, shared);
      const req: CompactionRequest = {
        ...request(spec.prompt),
        ...(spec.force ? { force: spec.force } : {}),
        ...(spec.instructions ? { instructions: "Keep every decision and every number." } : {}),
      };
      const out = await withRetry(run, e, faults, "compaction", !concurrent, (deps) => compactIfNeeded(deps, e.key, req), container);
      if (out) await sawCompaction(run, e, out, before, null);
      return;
    }
    case "range": {
      const history = await readAllMessages(run.inner, e.key);
      if (history.length === 0) return;
      const at = (f: number) => history[Math.floor(f * (history.length - 1))]!.createdAt;
      const range = { from: at(spec.fromFrac), to: at(spec.toFrac), topicLabel: spec.topicLabel };
      const out = await withRetry(run, e, faults, "range compaction", !concurrent, (deps) => compactRange(deps, e.key, range), container);
      if (out?.memoryId) e.memories.add(out.memoryId);
      else if (out?.reason && BACKED_OFF.test(out.reason)) run.stats.compactions.backedOff++;
      return;
    }
    case "context":
      return runContext(run, e, faults, concurrent, shared, container);
  }
}

/** An append; a client that sends twice does so with the same idempotency key, after the first answer. */
async function runAppend(run: ChaosRun, e: Engine, faults: OpFaults, spec: Simple<"append">, concurrent: boolean, container?: Container) {
  const m = spec.message;
  e.ledger.sent.add(m.nonce);
  const out = await withRetry(run, e, faults, "append", m.idem && !concurrent, (deps) => appendMessage(deps, e.key, engineBody(e, m)), container);
  if (out) ack(e.ledger, m.nonce, out.message.id);
  if (spec.sendTwice && m.idem) {
    countFault(run.stats, "duplicate-append");
    const again = await attempt(run, e, NO_FAULTS, (deps) => appendMessage(deps, e.key, engineBody(e, m)));
    if (again.ok) ack(e.ledger, m.nonce, again.value.message.id);
    else unexpected(run, e, "duplicate append", again.error);
  }
}

/** A turn (with or without a message): its own message must be stored, and active when nothing raced it. */
async function runTurnOp(run: ChaosRun, e: Engine, faults: OpFaults, spec: Simple<"turn">, concurrent: boolean, shared: boolean, container?: Container) {
  const m = spec.message;
  if (m) e.ledger.sent.add(m.nonce);
  const before = await viewBefore(run, e, shared);
  const turn = { ...request(spec.prompt), ...(m ? { message: appendBody(m) } : {}) };
  const out = await withRetry(run, e, faults, "turn", !concurrent && (m === null || m.idem), (deps) => runTurn(deps, e.key, turn), container);
  if (!out) return;
  let mine: Message | null = null;
  if (m) {
    const tag = `${NONCE_TAG}${m.nonce}`;
    mine = out.messages.find((x) => x.tags.includes(tag)) ?? null;
    if (!mine) {
      const stored = (await readAllMessages(run.inner, e.key)).find((x) => x.tags.includes(tag));
      if (!stored) violate(run.stats, [`${where(e)}: the message of an acknowledged turn (${m.nonce}) is not stored`]);
      // The turn's own message is the newest: the triggering turn and the anchor keep it active.
      else if (!shared) violate(run.stats, [`${where(e)}: the turn's own message ${stored.id} is not in the active messages it returned`]);
      mine = stored ?? null;
    }
    if (mine) ack(e.ledger, m.nonce, mine.id);
  }
  keptPrefix(run, e, out, concurrent || shared || e.background.size > 0);
  return sawCompaction(run, e, out.compaction, before, mine);
}

/**
 * A turn that says it kept the prefix must answer the previous turn's prompt plus appends: checked
 * between two turns of the engine that ran with nothing else of it in flight.
 */
function keptPrefix(run: ChaosRun, e: Engine, out: Awaited<ReturnType<typeof runTurn>>, busy: boolean) {
  const now = plainPrompt(out);
  const broken = !busy && out.prefix.kept && e.lastPrompt ? requestBreak(e.lastPrompt, now) : null;
  if (broken) violate(run.stats, [`${where(e)}: a turn said it kept the prefix, but ${broken}`]);
  e.lastPrompt = busy ? undefined : now;
}

/** Reads the context; when nothing else writes meanwhile, it must replay exactly what is stored. */
async function runContext(run: ChaosRun, e: Engine, faults: OpFaults, concurrent: boolean, shared: boolean, container?: Container) {
  const out = await withRetry(
    run,
    e,
    faults,
    "context",
    !concurrent,
    async (deps) => {
      const view = await settledView(deps, e.key);
      return { view, context: await composeContext(deps, e.key, view) };
    },
    container,
  );
  if (!out || shared) return;
  // A quiet process: the replay is the newest OK summary and exactly the active messages.
  // (A worker's parent belongs to another engine that may be compacting: compare the summary only.)
  const memories = await run.inner.listMemories(e.key);
  const expected = { block: e.plan.parentProcessId ? out.context.block : await expectedBlock(run.inner, e.key, memories), summary: expectedSummary(memories) };
  violate(run.stats, replayViolations(e.key, out.context, expected, "context"));
  violate(run.stats, activeSetViolations(e.key, out.view.messages, await readAllMessages(run.inner, e.key), "settled view"));
}

/**
 * A roll-forward delivered twice: the store's markArchived called again for a memory whose
 * archives may already be settled, as a retried Lambda would. It must never re-point a message.
 */
export async function runReplayArchive(run: ChaosRun, e: Engine, op: OpPlan, spec: Extract<OpSpec, { kind: "replayArchive" }>) {
  const ok = (await run.inner.listMemories(e.key)).filter((m) => m.status === "OK");
  if (ok.length === 0) return;
  const memory = ok[Math.floor(spec.memoryFrac * ok.length)]!;
  const pending = (await run.inner.getProcess(e.key))?.pendingArchive === memory.id;
  // A duplicated roll-forward: markArchived again with the same memory must never re-point a message.
  const out = await withRetry(run, e, op, "replayed roll-forward", true, (deps) => deps.store.markArchived(e.key, memory.sourceRefs, memory.id, originalsExpiry(memory)));
  if (out && !pending && out.archived.length > 0) {
    violate(run.stats, [`${where(e)}: a replayed roll-forward of settled memory ${memory.id} archived ${out.archived.length} more messages`]);
  }
}
