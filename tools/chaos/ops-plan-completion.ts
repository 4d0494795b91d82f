/**
 * A finished plan: the engine appends the plan's messages, the PlanCompleted event arrives (once
 * or several times, maybe at once), the offer it makes is answered (sometimes twice), and the
 * answer's events are delivered. One plan must make one offer, under an id derived from the
 * process and the plan, and a second answer must be refused.
 */
import { AppError } from "../../core/domain/errors.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { answerInboxItem } from "../../core/services/inbox.js";
import { offerId } from "../../core/services/recompaction-offers.js";
import { appendMessage } from "../../core/services/messages.js";
import { describe, withRetry, type RunningOp } from "./attempt.js";
import { ack } from "./checks.js";
import { deliverPending } from "./deliveries.js";
import type { OpSpec } from "./plan.js";
import { countFault, violate } from "./report.js";
import { appendBody, sleep, where, type ChaosRun, type Engine } from "./run-state.js";
import { handlePlanCompleted } from "../../core/adapters/events/handlers.js";

export async function runPlanCompletion(run: ChaosRun, e: Engine, op: RunningOp, spec: Extract<OpSpec, { kind: "plan" }>) {
  const { stats, offers } = run;
  const drafts = [spec.marker, ...spec.steps];
  for (const m of drafts) e.ledger.sent.add(m.nonce);
  const complete = async (deps: ServiceDeps) => {
    for (const m of drafts) {
      const out = await appendMessage(deps, e.key, appendBody(m));
      ack(e.ledger, m.nonce, out.message.id);
    }
    await sleep(2); // completedAt after the last step, in another millisecond
    const detail = { tenantId: e.key.tenantId, processId: e.key.processId, planId: spec.planId, topicLabel: spec.topicLabel, completedAt: new Date().toISOString() };
    if (spec.copies > 1) countFault(stats, "duplicate-delivery", spec.copies - 1);
    const deliver = () => handlePlanCompleted(deps, detail);
    const results: Awaited<ReturnType<typeof deliver>>[] = [];
    if (spec.concurrentCopies) results.push(...(await Promise.all(Array.from({ length: spec.copies }, deliver))));
    else for (let i = 0; i < spec.copies; i++) results.push(await deliver());
    const offered = results.filter((r) => r.offered).length;
    if (offered > 1) violate(stats, [`${where(e)}: one PlanCompleted made ${offered} offers`]);
    const item = results.find((r) => r.item)?.item;
    if (!item) return;
    const k = `${e.key.tenantId}/${item.id}`;
    if (item.id !== offerId(e.key.processId, spec.planId)) violate(stats, [`${k}: the offer id is not derived from (process, plan)`]);
    if (!offers.has(k)) {
      offers.set(k, { tenantId: e.key.tenantId, processId: e.key.processId, itemId: item.id, answered: null, outcomes: [] });
      stats.offers.created++;
    }
    const record = offers.get(k)!;
    if (record.answered !== null) return;
    try {
      const answered = await answerInboxItem(deps, e.key.tenantId, item.id, spec.accept);
      record.answered = answered.status === "ACCEPTED" ? "ACCEPTED" : "DECLINED";
      if (spec.accept) stats.offers.accepted++;
      else stats.offers.declined++;
    } catch (err) {
      if (!(err instanceof AppError && err.code === "inbox.already_answered")) throw err;
    }
    if (spec.answerTwice) {
      countFault(stats, "duplicate-answer");
      const second = await answerInboxItem(deps, e.key.tenantId, item.id, !spec.accept).then(
        () => null,
        (err: unknown) => err,
      );
      if (!(second instanceof AppError && second.code === "inbox.already_answered")) {
        violate(stats, [`${k}: a second answer was not refused with 409 (${describe(second)})`]);
      }
    }
  };
  // Appends meet an appendMessage fault or stall; the range compaction of the answer meets the others.
  const appends = op.fault?.method === "appendMessage";
  const held = op.stall?.on === "store" && op.stall.method === "appendMessage";
  const faults = { fault: appends ? op.fault : null, summarizer: appends ? op.summarizer : [], stall: held ? op.stall : undefined, hold: op.hold };
  await withRetry(run, e, faults, "plan completion", true, complete);
  await deliverPending(run, e, op);
}
