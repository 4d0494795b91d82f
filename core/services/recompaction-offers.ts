/**
 * Plan completion (docs/api.md, "Events"): an offer to fold a finished topic, and the range job an
 * accepted offer queues for the compaction worker. Every handler is idempotent: events arrive at
 * least once. They take parsed details: the inbound event adapter (core/adapters/events/handlers.ts)
 * parses them with the catalogue's schemas. Listing and answering offers is ./inbox.ts, which the
 * plain routes serve without this module's fold code (docs/benchmarks.md, "Cold start").
 */
import { createHash } from "node:crypto";
import { conflict } from "../domain/errors.js";
import { domainEvent, type EventDetail } from "../domain/events.js";
import type { InboxItem, Message } from "../domain/model.js";
import { keptAt } from "../domain/retention.js";
import type { CoreDeps, ServiceDeps } from "./deps.js";
import { queueRangeJob } from "./compaction/fold-queue.js";
import { publishSafely } from "../ports/events.js";
import type { RangeResult } from "./compaction/range-compaction.js";

export const PLAN_MARKER_TAG = "MODE:plan";
export const OFFER_TAG = "RECOMPACTION_OFFER";

export type PlanCompletedDetail = EventDetail<"PlanCompleted">;

/** One item per (process, plan): a duplicate delivery finds the same id and creates nothing. */
export function offerId(processId: string, planId: string): string {
  return `inb_${createHash("sha256").update(`${processId}\u0000${planId}`).digest("hex").slice(0, 26)}`;
}

async function fullHistory(deps: CoreDeps, key: { tenantId: string; processId: string }): Promise<Message[]> {
  const all: Message[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.store.listMessages(key, { limit: 1000, cursor });
    all.push(...keptAt(page.items, deps.clock.now()));
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/**
 * Where the finished plan started: the newest `MODE:plan` message at or before completion, and
 * whether at least two USER messages (the auto-pinned task included) came before it.
 */
function planStart(history: Message[], completedAt: string): { marker: Message; usersBefore: number } | null {
  const done = Date.parse(completedAt);
  let markerIndex = -1;
  history.forEach((m, i) => {
    if (m.tags.includes(PLAN_MARKER_TAG) && Date.parse(m.createdAt) <= done) markerIndex = i;
  });
  if (markerIndex < 0) return null;
  const usersBefore = history.slice(0, markerIndex).filter((m) => m.role === "USER").length;
  return { marker: history[markerIndex]!, usersBefore };
}

/** A finished plan: one offer to fold its topic, if at least two user turns came before the plan started. */
export async function offerRecompaction(deps: ServiceDeps, detail: PlanCompletedDetail): Promise<{ offered: boolean; item?: InboxItem }> {
  const key = { tenantId: detail.tenantId, processId: detail.processId };
  if (!(await deps.store.getProcess(key))) return { offered: false };
  const start = planStart(await fullHistory(deps, key), detail.completedAt);
  if (!start || start.usersBefore < 2) return { offered: false };

  const item: InboxItem = {
    id: offerId(detail.processId, detail.planId),
    processId: detail.processId,
    type: "APPROVAL",
    tags: [OFFER_TAG],
    status: "OPEN",
    payload: { from: start.marker.createdAt, to: new Date(detail.completedAt).toISOString(), topicLabel: detail.topicLabel },
    createdAt: deps.clock.now().toISOString(),
  };
  const put = await deps.store.putInboxItem(detail.tenantId, item);
  if (put.created) {
    await publishSafely(
      deps,
      domainEvent("RecompactionOffered", { tenantId: detail.tenantId, processId: detail.processId, itemId: item.id, topicLabel: detail.topicLabel }),
    );
  }
  return { offered: put.created, item: put.item };
}

/**
 * Queues the range compaction of an accepted offer for the worker and answers at once
 * (`reason: "compaction_queued"`). Safe to repeat: the offer records its one job
 * (`rangeJobId`), so a later delivery asks again for that job while it is queued and does nothing
 * once it ended (`already_folded`, `reverted`, or the reason it was discarded): an undone range
 * fold never comes back. A delivery that finds the range already folded before any job was
 * recorded (markers never fold) answers `nothing_in_range`.
 */
export async function runAcceptedOffer(deps: ServiceDeps, detail: EventDetail<"InboxItemAnswered">): Promise<RangeResult | null> {
  const { tenantId, itemId } = detail;
  const item = await deps.store.getInboxItem(tenantId, itemId);
  // The event is published just before the answer is stored: an OPEN item may be a moment away
  // from ACCEPTED, so fail the delivery and let it come again. (If the answer never lands, the
  // retries run out and the item stays OPEN, to be answered again.)
  if (item?.status === "OPEN" && detail.accepted) {
    throw conflict("compaction.retry_later", `inbox item '${itemId}' is not answered yet; deliver again`);
  }
  // The stored status decides, not the event: a forged or stale `accepted` changes nothing.
  if (!item || item.status !== "ACCEPTED" || !item.tags.includes(OFFER_TAG)) return null;
  // The fold itself runs in the compaction worker, which retries it until it is folded (or finds
  // the range folded already); this delivery only queues it.
  return queueRangeJob(deps, { tenantId, processId: item.processId }, { ...item.payload, inboxItemId: item.id }, item.rangeJobId);
}
