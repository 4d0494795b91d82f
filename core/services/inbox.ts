/**
 * The inbox (docs/api.md, "Events"): list the offers to fold a finished topic, answer one once.
 * The offers themselves and what an accepted one queues are ./recompaction-offers.ts.
 */
import { conflict, notFound } from "../domain/errors.js";
import { domainEvent } from "../domain/events.js";
import type { InboxItem, InboxStatus } from "../domain/model.js";
import type { CoreDeps, ServiceDeps } from "./deps.js";

export async function listInbox(deps: CoreDeps, tenantId: string, filter: { processId?: string; status?: InboxStatus }) {
  return deps.store.listInbox(tenantId, filter);
}

const alreadyAnswered = (itemId: string) => conflict("inbox.already_answered", `inbox item '${itemId}' was already answered`);

/**
 * OPEN -> ACCEPTED/DECLINED exactly once; a second answer is a 409.
 *
 * The event goes out before the answer is stored, so a stored answer always has its event: a
 * crash in between leaves the item OPEN (answer again), and a failed publish is a 500 with nothing
 * stored. An event whose answer lost a race or never landed changes nothing, because the handler
 * acts on the stored status only (and waits while the item is still OPEN).
 */
export async function answerInboxItem(deps: ServiceDeps, tenantId: string, itemId: string, accepted: boolean): Promise<InboxItem> {
  const current = await deps.store.getInboxItem(tenantId, itemId);
  if (!current) throw notFound("inbox item", itemId, "inbox_item");
  if (current.status !== "OPEN") throw alreadyAnswered(itemId);
  await deps.events.publish(domainEvent("InboxItemAnswered", { tenantId, itemId, accepted }));
  const out = await deps.store.answerInboxItem(tenantId, itemId, accepted ? "ACCEPTED" : "DECLINED", deps.clock.now().toISOString());
  if (!out.ok) {
    if (out.reason === "not_found") throw notFound("inbox item", itemId, "inbox_item");
    throw alreadyAnswered(itemId);
  }
  return out.item;
}
