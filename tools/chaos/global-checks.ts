/**
 * The end-of-run checks across processes and tenants: every MemoryCompacted names a real summary
 * and each summary or offer is announced once, each tenant lists only its own processes and
 * inbox items, every accepted offer was folded or found nothing left to fold, and every message
 * sent with native content still reads back exactly what was sent. It also counts the compactions
 * the report shows, read back from the store rather than from what calls returned.
 */
import { TRANSACTION_LIMIT } from "../../core/adapters/dynamodb/store.js";
import { storedNative, type Memory } from "../../core/domain/model.js";
import { readAllMessages } from "../invariants.js";
import { nativeViolations } from "../native-invariants.js";
import { providerBlockChecks } from "./block-checks.js";
import { expiredPastItsLife, nonceOf } from "./checks.js";
import { CHAOS_TENANTS } from "./plan.js";
import { violate } from "./report.js";
import { detailOf, where, type ChaosRun, type Container, type Engine, type OfferRecord } from "./run-state.js";

/** `engines`: those whose process was not deleted; the events and offers of a deleted one are out too. */
export async function checkGlobal(run: ChaosRun, engines: readonly Engine[], clean: Container) {
  const { inner, stats } = run;
  const kept = (d: { tenantId: string; processId: string }) => !stats.excluded.has(`${d.tenantId}/${d.processId}`);
  const events = run.events.filter((ev) => kept(detailOf(ev)));
  const offers = new Map([...run.offers].filter(([, record]) => kept(record)));
  const v: string[] = [];
  const memoryOf = new Map<string, Memory>();
  for (const e of engines) for (const m of await inner.listMemories(e.key)) memoryOf.set(`${where(e)}#${m.id}`, m);
  // The copies' own folds are announced too (their memories are not counted in the report).
  const copyMemory = new Map<string, Memory>();
  for (const c of run.copies) for (const m of await inner.listMemories(c)) copyMemory.set(`${c.tenantId}/${c.processId}#${m.id}`, m);
  for (const m of memoryOf.values()) {
    if (m.status === "FAILED") {
      stats.compactions.failedRows++;
      continue;
    }
    if (m.status !== "OK") {
      stats.compactions.folds[m.status] = (stats.compactions.folds[m.status] ?? 0) + 1;
      continue;
    }
    // Prepared by the worker, committed by an EMERGENCY turn (`prepared`) or by the worker when a turn found it due.
    if (m.metadata.producedBy === "prepared" || (m.metadata.producedBy === "worker" && m.metadata.preparedAt !== undefined)) stats.compactions.preparedUsed++;
    stats.compactions.committed++;
    const mode = m.metadata.mode ?? "?";
    stats.compactions.byMode[mode] = (stats.compactions.byMode[mode] ?? 0) + 1;
    // The commit's transaction holds the memory, META, the superseded summary and a range marker.
    const fixed = 2 + (m.metadata.supersededMemoryId ? 1 : 0) + (m.metadata.recompaction ? 1 : 0);
    if (m.sourceRefs.length > TRANSACTION_LIMIT - fixed) stats.compactions.rolledForward++;
  }
  const announced = new Map<string, number>();
  for (const ev of events) {
    const d = detailOf(ev);
    if (ev.detailType === "MemoryCompacted") {
      const k = `${d.tenantId}/${d.processId}#${d.memoryId}`;
      announced.set(k, (announced.get(k) ?? 0) + 1);
      // A summary undone later is REVERTED, never FAILED.
      if (!["OK", "REVERTED"].includes((memoryOf.get(k) ?? copyMemory.get(k))?.status ?? "")) v.push(`MemoryCompacted names ${k}, which is not an OK or REVERTED memory`);
    }
    if (ev.detailType === "RecompactionOffered") {
      const k = `offer ${d.tenantId}/${d.itemId}`;
      announced.set(k, (announced.get(k) ?? 0) + 1);
    }
  }
  for (const [k, n] of announced) if (n > 1) v.push(`${k} was announced ${n} times`);

  for (const tenantId of CHAOS_TENANTS) {
    const own = [...engines.map((e) => e.key), ...run.copies].filter((k) => k.tenantId === tenantId).map((k) => k.processId).sort();
    const listed = (await clean.deps.store.listProcesses(tenantId, { limit: 100 })).items.map((p) => p.processId).sort();
    if (JSON.stringify(listed) !== JSON.stringify(own)) v.push(`${tenantId}: process listing [${listed}] is not its own processes [${own}]`);
    const inbox = await clean.deps.store.listInbox(tenantId, {});
    for (const item of inbox) {
      const record = offers.get(`${tenantId}/${item.id}`);
      if (!record || record.processId !== item.processId) v.push(`${tenantId}: inbox item ${item.id} was never offered to this tenant`);
      else if ((record.answered ?? "OPEN") !== item.status) v.push(`${tenantId}: inbox item ${item.id} is ${item.status}, answered ${record.answered ?? "never"}`);
    }
    for (const record of offers.values()) {
      if (record.tenantId === tenantId && !inbox.some((i) => i.id === record.itemId)) v.push(`${tenantId}: offer ${record.itemId} is gone`);
    }
  }
  // An accepted offer is folded, or found nothing left to fold; acknowledging its event without
  // either loses it. Deliveries that only ever failed are the platform's dead letters.
  for (const record of offers.values()) {
    // Folded once: a later delivery of its answer never folds it again, even after the user undid
    // that fold (docs/compaction.md, "Range jobs").
    const folds = record.outcomes.filter((o) => o === "compacted").length;
    if (folds > 1) v.push(`accepted offer ${record.tenantId}/${record.itemId} was range-compacted ${folds} times`);
    if (record.answered !== "ACCEPTED" || record.outcomes.includes("compacted")) continue;
    // A later delivery of the answer found the offer's job committed (and maybe undone since).
    if (record.outcomes.includes("already_folded") || record.outcomes.includes("reverted")) continue;
    if (record.outcomes.includes("nothing_in_range")) {
      stats.offers.nothingLeft++;
      continue;
    }
    // Its request waited in the harness while the clock jumped past the job's life.
    if (record.outcomes.includes("expired") && (await heldPastItsLife(run, record))) {
      stats.offers.expiredHeld++;
      continue;
    }
    if (record.outcomes.length > 0) {
      v.push(`accepted offer ${record.tenantId}/${record.itemId}: its event was acknowledged without a range compaction (${record.outcomes.join(", ")})`);
    } else stats.offers.deadLettered++;
  }
  v.push(...(await nativeChecks(run, engines, clean)));
  v.push(...(await providerBlockChecks(run, engines, clean)));
  violate(stats, v);
}

/** Whether a range job of the offer expired only because its request was held across a clock jump. */
async function heldPastItsLife(run: ChaosRun, record: OfferRecord): Promise<boolean> {
  const key = { tenantId: record.tenantId, processId: record.processId };
  for (const [jobId, offer] of run.rangeJobs) {
    if (offer === record && expiredPastItsLife(await run.inner.getMemory(key, jobId), run.heldAcrossJump.get(jobId))) return true;
  }
  return false;
}

/**
 * Each process's messages with native content (tools/invariants.ts, `nativeViolations`), after
 * whatever folds, reverts, clears and crashes met them, and each keeps the hash of what its engine
 * sent, so nothing was swapped for another message's content.
 */
async function nativeChecks(run: ChaosRun, engines: readonly Engine[], clean: Container): Promise<string[]> {
  const v: string[] = [];
  for (const e of engines) {
    const messages = await readAllMessages(run.inner, e.key);
    v.push(...(await nativeViolations(clean.deps, e.key, messages)));
    for (const m of messages) {
      const sent = e.native.get(nonceOf(m) ?? "");
      const stored = storedNative(m);
      if (sent === undefined) {
        if (stored) v.push(`${where(e)}: message ${m.id} has native content its engine never sent`);
        continue;
      }
      if (!stored) v.push(`${where(e)}: message ${m.id} was sent with native content and has none`);
      else if (stored.hash !== sent) v.push(`${where(e)}: message ${m.id} keeps native content of hash ${stored.hash}, its engine sent ${sent}`);
      else run.stats.native.messages++;
    }
    run.stats.native.blobs += (await run.blobs.list(e.key)).length;
  }
  return v;
}
