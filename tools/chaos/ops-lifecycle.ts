/**
 * The data-lifecycle operations of an engine (tools/chaos/README.md, "Copies, expiries and
 * erasure"): an export of its process imported into a copy, which must keep every invariant
 * before and after it folds and hold every message the engine had seen acknowledged; and a clock
 * moved past the retention, after which DynamoDB's TTL removes what is due in the process (as the
 * service's reads already treat it as gone).
 */
import { DeleteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { MEMORY_PREFIX, MESSAGE_PREFIX, processPk, TTL_ATTRIBUTE } from "../../core/adapters/dynamodb/keys.js";
import { AppError } from "../../core/domain/errors.js";
import { exportLines } from "../../core/domain/process-export.js";
import { isExpired } from "../../core/domain/retention.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { settledView } from "../../core/services/compaction/settle.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { exportPage, type ExportCursor } from "../../core/services/process-export.js";
import { importExport } from "../../core/services/process-import.js";
import { findViolations, readAll } from "../invariants.js";
import { attempt, describe, withEngineSummarizer, NO_FAULTS, unexpected, type RunningOp } from "./attempt.js";
import { ackedIds, archiveChainViolations, expiredByRetention, keyString, memoryRuleViolations, toolGroupViolations } from "./checks.js";
import type { OpSpec } from "./plan.js";
import { violate } from "./report.js";
import { busy, newContainer, where, type ChaosRun, type Engine } from "./run-state.js";

/** Every page of the export of `key`, `pageBytes` a page. */
export async function exportAll(deps: ServiceDeps, key: ProcessKey, pageBytes: number): Promise<string> {
  let text = "";
  let cursor: ExportCursor | undefined;
  do {
    const page = await exportPage(deps, key, cursor, { pageBytes, readMessages: 50 });
    text += page.text;
    cursor = page.next;
  } while (cursor);
  return text;
}

/** Imports `text` into `key` as the command-line import does (no item cap, no rate: floods make processes large). */
export const importText = (deps: ServiceDeps, key: ProcessKey, text: string) => importExport(deps, key, () => exportLines(text), { remapIds: false });

/**
 * Exports the engine's process and imports it into `<process>-copy<op>`. A 409 `export.changed`
 * is an answer only while something else of the engine ran (a held page, work in the background):
 * a quiet process does not change under its own export.
 */
export async function runCopy(run: ChaosRun, e: Engine, op: RunningOp, spec: Extract<OpSpec, { kind: "copy" }>) {
  const shared = busy(e) || op.hold !== undefined;
  const seen = ackedIds(e.ledger);
  const copy = { tenantId: e.key.tenantId, processId: `${e.key.processId}-copy${op.id}` };
  let exportedAt = new Date(0);
  const out = await attempt(run, e, { ...NO_FAULTS, stall: op.stall, hold: op.hold }, async (deps) => {
    const text = await exportAll(deps, e.key, spec.pageBytes);
    exportedAt = deps.clock.now();
    return importText(deps, copy, text);
  });
  if (!out.ok) {
    if (out.error instanceof AppError && out.error.code === "export.changed") {
      run.stats.lifecycle.changed++;
      if (!shared && !e.deletion) violate(run.stats, [`${where(e)}: the export of a quiet process was refused as changed`]);
      return;
    }
    return unexpected(run, e, "copy", out.error);
  }
  run.stats.lifecycle.copies++;
  run.copies.push(copy);
  violate(run.stats, await copyViolations(run, e, copy, seen, exportedAt));
}

/**
 * A copy keeps every invariant, holds every message the engine saw acknowledged before its export
 * began (short of those past their retention) with the same content, and still does after a
 * forced fold of the copy. `exportedAt`: the clock when the export's last page was read.
 */
async function copyViolations(run: ChaosRun, e: Engine, copy: ProcessKey, seen: readonly string[], exportedAt: Date): Promise<string[]> {
  const label = `copy ${keyString(copy)} of ${where(e)}`;
  const clean = newContainer(run);
  const now = clean.deps.clock.now();
  const check = async (when: string) => {
    await settledView(clean.deps, copy);
    const snapshot = await readAll(run.inner, copy);
    // An original past its retention is not exported: the copy's memory lists it, as the source's
    // does. Judged from the copy's own memories: the source's TTL may still be sweeping.
    const expired = new Map([...e.expired, ...expiredByRetention(snapshot, exportedAt)]);
    const found = [
      ...findViolations(snapshot, { settled: true, noLease: true, expired }),
      ...memoryRuleViolations(snapshot, e.reweighed, expired),
      ...toolGroupViolations(snapshot),
      ...archiveChainViolations(snapshot),
    ];
    const copied = new Map(snapshot.messages.map((m) => [m.id, m]));
    for (const source of await run.inner.getMessages(e.key, [...seen])) {
      if (isExpired(source, now)) continue;
      const m = copied.get(source.id);
      if (!m) found.push(`message ${source.id} of the source is not in the copy`);
      else if (m.content !== source.content) found.push(`message ${source.id} has other content in the copy`);
    }
    return found.map((v) => `${label} (${when}): ${v}`);
  };
  try {
    const v = await check("imported");
    const folded = await compactIfNeeded(withEngineSummarizer(run, e, clean.deps), copy, { model: { contextWindow: 100_000 }, force: "EMERGENCY" });
    if (!folded.compacted && !["keep_recent", "nothing_eligible"].includes(folded.reason ?? "")) v.push(`${label}: a forced fold of the copy did not run (${folded.reason})`);
    return [...v, ...(await check("folded"))];
  } catch (err) {
    return [`${label}: could not be checked: ${describe(err)}`];
  }
}

/**
 * Moves every container's clock `days` ahead and runs DynamoDB's TTL over the engine's process:
 * each item whose TTL is due is deleted, only while it still is (a revert may have removed it
 * since it was read). What it removed is recorded for the checks (tools/invariants.ts, `expired`).
 */
export async function runExpire(run: ChaosRun, e: Engine, spec: Extract<OpSpec, { kind: "expire" }>) {
  run.clockAheadMs += spec.days * 86_400_000;
  run.stats.lifecycle.expiries++;
  // A range job's request that waits across the jump arrives later than any redrive could.
  const jumpedTo = Date.now() + run.clockAheadMs;
  for (const ev of run.events) {
    if (ev.detailType === "CompactionRequested" && ev.detail.job === "range" && ev.delivered === 0) run.heldAcrossJump.set(String(ev.detail.foldId), jumpedTo);
  }
  if (e.deletion) return;
  const { client, tableName } = run.table;
  const dueBy = Math.floor((Date.now() + run.clockAheadMs) / 1000);
  const items = await client.send(new QueryCommand({ TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": processPk(e.key) }, ConsistentRead: true }));
  for (const item of items.Items ?? []) {
    if (typeof item[TTL_ATTRIBUTE] !== "number" || item[TTL_ATTRIBUTE] > dueBy) continue;
    const sk = String(item.sk);
    try {
      await client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: { pk: item.pk, sk },
          ConditionExpression: "#ttl <= :due",
          ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ":due": dueBy },
        }),
      );
    } catch (err) {
      if ((err as Error).name === "ConditionalCheckFailedException") continue;
      throw err;
    }
    if (sk.startsWith(MESSAGE_PREFIX)) {
      const id = sk.slice(MESSAGE_PREFIX.length);
      // Only an archived original may expire: an active message the TTL removes is lost.
      if (typeof item.archivedInMemoryId !== "string") violate(run.stats, [`${where(e)}: DynamoDB's TTL removed active message ${id}, which carried an expiry`]);
      else e.expired.set(id, item.archivedInMemoryId);
      run.stats.lifecycle.swept++;
    } else if (sk.startsWith(MEMORY_PREFIX)) e.expired.set(sk.slice(MEMORY_PREFIX.length), null);
  }
}
