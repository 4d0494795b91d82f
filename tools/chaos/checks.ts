/**
 * Checks the chaos harness (and the commit-protocol property test) adds to the invariants of
 * tools/invariants.ts: what the caller saw acknowledged is stored exactly once, each memory
 * folded only what its mode may fold, a tool call and its results stay together, the anchor and
 * the triggering turn of a compaction were spared, and the replay is the newest OK summary plus
 * the active messages. Pure functions over snapshots, except the replay check, which calls the
 * service the way an engine does.
 */
import { buildSections, neutraliseHeadings, renderBlock, SUMMARY_HEADING } from "../../core/domain/context-block.js";
import { renderLedger } from "../../core/domain/ledger/render.js";
import { newestCommitted } from "../../core/domain/memory-order.js";
import type { Memory, Message } from "../../core/domain/model.js";
import { toolGroups } from "../../core/domain/tool-groups.js";
import { effectiveStrength, type Strength } from "../../core/domain/strength.js";
import type { Tunables } from "../../core/domain/tunables.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { RANGE_MARKER_PREFIX } from "../../core/domain/fields.js";
import { MODE_POLICY, type FoldModeName } from "../../core/domain/mode-policy.js";
import { originalsExpiry } from "../../core/domain/retention.js";
import { LATEST_DELIVERY_MS } from "../../core/domain/late-delivery.js";
import { expiredAway, type Snapshot } from "../invariants.js";
import { NONCE_TAG } from "./plan.js";

export const keyString = (k: ProcessKey) => `${k.tenantId}/${k.processId}`;
export const nonceOf = (m: Pick<Message, "tags">) => m.tags.find((t) => t.startsWith(NONCE_TAG))?.slice(NONCE_TAG.length);
export const isRangeMarker = (m: Pick<Message, "tags">) => m.tags.some((t) => t.startsWith(RANGE_MARKER_PREFIX));

/**
 * Whether an accepted offer's range job ended `expired` only because the harness held its worker
 * request past what the platform would (docs/reliability.md, "Late deliveries"): the job is
 * DISCARDED as expired after the full life a delivery can still find it in, and a clock jump took
 * the clock past that life while the request it was queued with was still undelivered (`heldUntil`:
 * the clock after the jump, epoch ms). A job discarded sooner, or whose request was never sent or
 * already answered when the clock moved, was lost.
 */
export function expiredPastItsLife(job: Memory | null, heldUntil: number | undefined): boolean {
  if (job?.status !== "DISCARDED" || job.metadata.discardReason !== "expired") return false;
  const queuedAt = Date.parse(job.metadata.queuedAt ?? job.createdAt);
  const expiresAt = Date.parse(job.metadata.expiresAt ?? "");
  return expiresAt - queuedAt >= LATEST_DELIVERY_MS && heldUntil !== undefined && heldUntil >= expiresAt;
}

/** What the mode policy (docs/compaction.md, "What is folded") lets a stored memory's mode fold; RANGE and unknown modes have no row. */
const mayFold = (mode: string): readonly Strength[] | undefined => (Object.hasOwn(MODE_POLICY, mode) ? MODE_POLICY[mode as FoldModeName].folds : undefined);

/**
 * Appends the caller sent, by nonce: every acknowledged one is stored exactly once under the id
 * the caller got (idempotent retries included); an unacknowledged one at most once.
 */
export interface AppendLedger {
  /** nonce -> ids the service acknowledged for it (more than one id is itself a violation). */
  acked: Map<string, Set<string>>;
  /** nonces sent at least once (acknowledged or not). */
  sent: Set<string>;
}

export const emptyLedger = (): AppendLedger => ({ acked: new Map(), sent: new Set() });

export function ack(ledger: AppendLedger, nonce: string, id: string) {
  ledger.sent.add(nonce);
  const ids = ledger.acked.get(nonce) ?? new Set<string>();
  ids.add(id);
  ledger.acked.set(nonce, ids);
}

export function ackedIds(ledger: AppendLedger): string[] {
  return [...ledger.acked.values()].flatMap((s) => [...s]);
}

export function ledgerViolations(snapshot: Snapshot, ledger: AppendLedger, expired?: ReadonlyMap<string, string | null>): string[] {
  const where = keyString(snapshot.key);
  const v: string[] = [];
  const byNonce = new Map<string, Message[]>();
  for (const m of snapshot.messages) {
    const nonce = nonceOf(m);
    if (nonce === undefined) {
      // Only the range path writes messages of its own: a SYSTEM marker next to its memory. Undoing
      // that fold archives the marker into the REVERTED memory (docs/compaction.md, "Undoing a compaction").
      const topic = m.tags.find((t) => t.startsWith(RANGE_MARKER_PREFIX))?.slice(RANGE_MARKER_PREFIX.length);
      const owner =
        topic !== undefined &&
        snapshot.memories.some(
          (mem) =>
            mem.metadata.recompaction &&
            mem.metadata.topicLabel === topic &&
            (mem.status === "OK" || (mem.status === "REVERTED" && m.archivedInMemoryId === mem.id)),
        );
      if (m.role !== "SYSTEM" || !owner || !m.id.endsWith(".r")) v.push(`message ${m.id} has no known origin (not appended, not a range marker)`);
      continue;
    }
    byNonce.set(nonce, [...(byNonce.get(nonce) ?? []), m]);
  }
  for (const [nonce, stored] of byNonce) {
    if (!ledger.sent.has(nonce)) v.push(`message ${stored[0]!.id} carries nonce ${nonce} that was never sent here`);
    if (stored.length > 1) v.push(`append ${nonce} is stored ${stored.length} times: ${stored.map((m) => m.id).join(", ")}`);
  }
  for (const [nonce, ids] of ledger.acked) {
    const stored = byNonce.get(nonce) ?? [];
    if (ids.size > 1) v.push(`append ${nonce} was acknowledged under ${ids.size} different ids: ${[...ids].join(", ")}`);
    // An original the TTL removed after its retention is gone on purpose (tools/invariants.ts, `expired`).
    if (stored.length === 0 && [...ids].every((id) => expired?.has(id))) continue;
    if (stored.length === 0) v.push(`acknowledged append ${nonce} (${[...ids].join(", ")}) is lost`);
    else if (!ids.has(stored[0]!.id)) v.push(`append ${nonce} is stored as ${stored[0]!.id}, acknowledged as ${[...ids].join(", ")}`);
  }
  return v.map((t) => `${where}: ${t}`);
}

/**
 * What a copy may lack by retention (tools/invariants.ts, `expired`): each original an OK memory of
 * `snapshot` folded, whose retention had run out by `at` (the export's last read), and that the copy
 * does not hold, to that memory. An export leaves out an original past its retention whether or not
 * the TTL has removed it from the source yet, so the copy's own memories say what it may lack.
 */
export function expiredByRetention(snapshot: Snapshot, at: Date): Map<string, string> {
  const held = new Set(snapshot.messages.map((m) => m.id));
  const gone = new Map<string, string>();
  for (const mem of snapshot.memories) {
    const expiry = mem.status === "OK" ? originalsExpiry(mem) : undefined;
    if (expiry === undefined || expiry * 1000 > at.getTime()) continue;
    for (const ref of mem.sourceRefs) if (!held.has(ref)) gone.set(ref, mem.id);
  }
  return gone;
}

/**
 * Per memory: a sliding-window memory folded only what its mode may fold and nothing pinned; a
 * range memory only unpinned messages inside its window and no marker; no memory folded a message
 * twice or miscounted.
 */
export function memoryRuleViolations(snapshot: Snapshot, reweighed: ReadonlySet<string> = new Set(), expired?: ReadonlyMap<string, string | null>): string[] {
  const where = keyString(snapshot.key);
  const v: string[] = [];
  const byId = new Map(snapshot.messages.map((m) => [m.id, m] as const));
  for (const mem of snapshot.memories) {
    if (new Set(mem.sourceRefs).size !== mem.sourceRefs.length) v.push(`memory ${mem.id} lists a message twice`);
    if (mem.metadata.compactedMessages !== mem.sourceRefs.length) {
      v.push(`memory ${mem.id} says ${mem.metadata.compactedMessages} messages, lists ${mem.sourceRefs.length}`);
    }
    const mode = mem.metadata.mode;
    for (const ref of mem.sourceRefs) {
      const m = byId.get(ref);
      if (!m) {
        if (!expiredAway(expired, ref, mem)) v.push(`memory ${mem.id} folded ${ref}, which does not exist`);
        continue;
      }
      // A FAILED or REVERTED memory left its messages active: a PATCH may have re-weighed them since.
      if (mem.status !== "OK" && reweighed.has(ref)) continue;
      const strength = effectiveStrength(m);
      if (strength === "pinned") v.push(`memory ${mem.id} folded pinned message ${ref}`);
      if (mem.metadata.recompaction) {
        const t = Date.parse(m.createdAt);
        if (t < Date.parse(mem.metadata.rangeFromAt ?? "") || t > Date.parse(mem.metadata.rangeToAt ?? "")) {
          v.push(`range memory ${mem.id} folded ${ref} (${m.createdAt}) outside ${mem.metadata.rangeFromAt}..${mem.metadata.rangeToAt}`);
        }
        if (isRangeMarker(m)) v.push(`range memory ${mem.id} folded the marker ${ref}`);
      } else if (mode && mayFold(mode) && !mayFold(mode)!.includes(strength)) {
        v.push(`${mode} memory ${mem.id} folded ${strength} message ${ref}`);
      }
    }
  }
  return v.map((t) => `${where}: ${t}`);
}

/**
 * Every archived message is still carried by the replay: the supersede chain from the OK memory
 * it is archived into (`supersededByMemoryId`, newer and newer) passes only OK memories and ends
 * at the active summary META names. With findViolations' per-message checks (tools/invariants.ts:
 * archived into an OK memory that exists and lists it; into a REVERTED one only as its range
 * marker), this is the invariant "every message is active, or archived into an OK memory, active
 * or superseded, whose chain leads to the active summary". One line per memory whose chain
 * breaks, naming one of its messages.
 */
export function archiveChainViolations(snapshot: Snapshot): string[] {
  const byId = new Map(snapshot.memories.map((m) => [m.id, m] as const));
  const active = snapshot.state?.activeSummaryId ?? null;
  const broken = new Map<string, string>();
  const verdict = new Map<string, string | null>();
  for (const msg of snapshot.messages) {
    const into = msg.archivedInMemoryId;
    const memory = into === null ? undefined : byId.get(into);
    if (!memory || memory.status !== "OK") continue;
    if (!verdict.has(memory.id)) verdict.set(memory.id, chainBreak(memory, byId, active));
    const why = verdict.get(memory.id);
    if (why && !broken.has(memory.id)) broken.set(memory.id, `messages archived into ${memory.id} (${msg.id} among them) are in no replay: ${why}`);
  }
  return [...broken.values()].map((t) => `${keyString(snapshot.key)}: ${t}`);
}

/** Why the chain from `memory` does not reach the active summary; null when it does. */
function chainBreak(memory: Memory, byId: ReadonlyMap<string, Memory>, active: string | null): string | null {
  const seen = new Set<string>();
  let m = memory;
  while (m.supersededAt !== null) {
    seen.add(m.id);
    const next = m.supersededByMemoryId === undefined ? undefined : byId.get(m.supersededByMemoryId);
    if (!next) return `${m.id} is superseded by ${m.supersededByMemoryId ?? "nothing"}, which does not exist`;
    if (next.status !== "OK") return `the chain reaches ${next.status} memory ${next.id}`;
    if (seen.has(next.id)) return `the chain loops at ${next.id}`;
    m = next;
  }
  return m.id === active ? null : `the chain ends at ${m.id}, the active summary is ${active ?? "none"}`;
}

/** A tool call and its results (appended in one go) are archived together or not at all. */
export function toolGroupViolations(snapshot: Snapshot): string[] {
  const groups = toolGroups(snapshot.messages).group;
  const into = new Map<number, Set<string | null>>();
  snapshot.messages.forEach((m, i) => {
    if (m.role !== "ASSISTANT" && m.role !== "TOOL") return;
    const g = groups[i]!;
    into.set(g, (into.get(g) ?? new Set()).add(m.archivedInMemoryId));
  });
  const v: string[] = [];
  for (const [g, targets] of into) {
    if (targets.size > 1) {
      v.push(`${keyString(snapshot.key)}: tool group of ${snapshot.messages[g]!.id} is split across ${[...targets].map(String).join(", ")}`);
    }
  }
  return v;
}

/**
 * One compaction seen from the caller's side, with the active messages it started from: it must
 * not have folded the last `anchor` messages, the triggering turn (the newest USER message and
 * what follows), anything pinned, or anything when there were `keepRecent` messages or fewer.
 */
export function anchorViolations(
  key: ProcessKey,
  before: readonly Message[],
  memory: Memory,
  mode: FoldModeName,
  tunables: Pick<Tunables, "keepRecent" | "softAnchor" | "hardAnchor" | "emergencyAnchor">,
): string[] {
  const v: string[] = [];
  const anchor = MODE_POLICY[mode].anchor(tunables);
  if (before.length <= tunables.keepRecent) v.push(`${mode} memory ${memory.id} folded with only ${before.length} active messages`);
  const protectedIds = new Set(before.slice(Math.max(0, before.length - anchor)).map((m) => m.id));
  let lastUser = -1;
  before.forEach((m, i) => m.role === "USER" && (lastUser = i));
  // docs/compaction.md "Inside the current turn": the newest USER message and the turn's non-tool
  // messages always stay; a mode that does not fold in the turn (SOFT) keeps the whole turn.
  const toolExchange = (m: Message) => m.role === "TOOL" || (m.role === "ASSISTANT" && (m.toolCalls?.length ?? 0) > 0);
  if (lastUser >= 0) {
    before.slice(lastUser).forEach((m, k) => {
      if (k === 0 || !MODE_POLICY[mode].foldsCurrentTurn || !toolExchange(m)) protectedIds.add(m.id);
    });
  }
  for (const m of before) if (effectiveStrength(m) === "pinned") protectedIds.add(m.id);
  const known = new Set(before.map((m) => m.id));
  for (const ref of memory.sourceRefs) {
    if (protectedIds.has(ref)) v.push(`${mode} memory ${memory.id} folded ${ref} from the anchor, the triggering turn or the pins`);
    if (!known.has(ref)) v.push(`${mode} memory ${memory.id} folded ${ref}, which was not active when it started`);
  }
  return v.map((t) => `${keyString(key)}: ${t}`);
}

/** The most recently committed OK, not superseded memory: what the replay must show. */
export function expectedSummary(memories: readonly Memory[]): Memory | null {
  return newestCommitted(memories.filter((m) => m.status === "OK" && m.supersededAt === null));
}

/**
 * The context block a process must get, built from an independent read of the store: the newest
 * OK summary and its evidence ledger and, for a worker, the parent's identity plus (same project
 * only) its summary.
 */
export async function expectedBlock(store: Store, key: ProcessKey, memories: readonly Memory[]): Promise<string> {
  const state = await store.getProcess(key);
  let parent = null;
  const parentId = state?.process.parentProcessId;
  if (parentId) {
    const parentKey = { tenantId: key.tenantId, processId: parentId };
    const p = await store.getProcess(parentKey);
    if (p) {
      const sameProject = p.process.projectId === state!.process.projectId;
      const summary = sameProject ? expectedSummary(await store.listMemories(parentKey))?.content ?? null : null;
      parent = { parent: p.process, summary };
    }
  }
  const head = expectedSummary(memories);
  // The ledger's section, rendered from the stored ledger within the budget its fold gave it.
  const ledger = head?.ledger && head.metadata.ledger ? renderLedger(head.ledger, head.metadata.ledger.budgetTokens).text : null;
  return renderBlock(buildSections({ summary: head?.content ?? null, ledger, parent })).block;
}

/** A composed context against the expectation: the block, and the summary section's text. */
export function replayViolations(
  key: ProcessKey,
  got: { block: string; sections: Array<{ name: string; content: string }> },
  expected: { block: string; summary: Memory | null },
  how: string,
): string[] {
  const v: string[] = [];
  const section = got.sections.find((s) => s.name === SUMMARY_HEADING);
  // The section shows the summary with its heading lines escaped (docs/api.md, the context block).
  const want = expected.summary ? neutraliseHeadings(expected.summary.content) : null;
  if ((section?.content ?? null) !== want) {
    v.push(`${how}: the replayed summary is ${section ? JSON.stringify(section.content.slice(0, 60)) : "absent"}, the newest OK memory is ${expected.summary?.id ?? "none"}`);
  }
  if (got.block !== expected.block) v.push(`${how}: the context block differs from the newest OK summary, its ledger and the parent section`);
  return v.map((t) => `${keyString(key)}: ${t}`);
}

/** The active messages a caller got equal the unarchived messages of the full history, in order. */
export function activeSetViolations(key: ProcessKey, got: readonly Pick<Message, "id">[], history: readonly Message[], how: string): string[] {
  const want = history.filter((m) => m.archivedInMemoryId === null).map((m) => m.id);
  const have = got.map((m) => m.id);
  return have.length === want.length && have.every((id, i) => id === want[i])
    ? []
    : [`${keyString(key)}: ${how}: the active messages (${have.length}) differ from the unarchived history (${want.length})`];
}
