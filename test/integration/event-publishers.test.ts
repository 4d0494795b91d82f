/**
 * Incoming events act only for the tenants their publisher may act for (docs/deploy.md, "Events
 * from another account"): the Lambda entries as deployed, and the inbound event adapter, against
 * DynamoDB Local.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { receiveInboxAnswered, receivePlanCompleted } from "../../core/adapters/events/handlers.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { accountPublishers, parsePublisherGrants } from "../../core/domain/event-publishers.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { freshTable } from "../support/dynamo.js";
import { createMemoryLog } from "../support/memory-log.js";
import { testContainer } from "../support/container.js";

const SERVICE_ACCOUNT = "123456789012";
const ENGINE_B = "222222222222";
const context = { invokedFunctionArn: `arn:aws:lambda:eu-west-1:${SERVICE_ACCOUNT}:function:team-a-PlanCompletedHandler` };

let table: Awaited<ReturnType<typeof freshTable>>;
let deps: ServiceDeps & { metrics: ReturnType<typeof createRecordingMetrics>; log: ReturnType<typeof createMemoryLog> };

beforeAll(async () => {
  table = await freshTable("publishers");
  const c = testContainer({ store: table.store });
  deps = { ...c.deps, metrics: c.metrics, log: c.log };
});

/** A process whose plan qualifies for an offer: two USER turns, then the plan marker. */
async function planned(key: ProcessKey) {
  await upsertProcess(deps, key.tenantId, key.processId, { projectId: "p" });
  for (const content of ["first topic", "second topic"]) await appendMessage(deps, key, { role: "USER", content });
  await appendMessage(deps, key, { role: "USER", content: "plan the move", tags: ["MODE:plan"] });
  await appendMessage(deps, key, { role: "ASSISTANT", content: "moved" });
  return { tenantId: key.tenantId, processId: key.processId, planId: "plan-1", topicLabel: "move", completedAt: new Date(Date.now() + 1000).toISOString() };
}

const inboxOf = async (tenantId: string) => (await table.store.listInbox(tenantId, {})).length;

describe("the PlanCompleted function as deployed", () => {
  let handler: (typeof import("../../functions/plan-completed.js"))["handler"];

  beforeAll(async () => {
    vi.stubEnv("TABLE_NAME", table.tableName);
    vi.stubEnv("DYNAMODB_ENDPOINT", table.endpoint);
    vi.stubEnv("EVENT_PUBLISHERS", `${ENGINE_B}=tenant-b`);
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
    vi.stubEnv("POWERTOOLS_LOG_LEVEL", "SILENT");
    ({ handler } = await import("../../functions/plan-completed.js"));
  });
  afterAll(() => void vi.unstubAllEnvs());

  it("drops a PlanCompleted from an account that may not act for the tenant it names", async () => {
    const detail = await planned({ tenantId: "fn-a", processId: "p1" });
    const event = { account: ENGINE_B, source: "vancetope.plan", "detail-type": "PlanCompleted", detail };
    expect(await handler(event, context)).toEqual({
      offered: false,
      itemId: null,
    });
    expect(await inboxOf("fn-a")).toBe(0);
  });

  it("acts for its own tenants, and the service's own account for any", async () => {
    const own = await planned({ tenantId: "fn-a", processId: "p2" });
    expect((await handler({ account: SERVICE_ACCOUNT, detail: own }, context)).offered).toBe(true);
    const granted = await planned({ tenantId: "tenant-b", processId: "p3" });
    expect((await handler({ account: ENGINE_B, detail: granted }, context)).offered).toBe(true);
  });
});

describe("the inbound event adapter", () => {
  const publishers = accountPublishers(parsePublisherGrants(`${ENGINE_B}=tenant-b`), SERVICE_ACCOUNT);

  it("drops, logs and counts an event for a tenant its publisher may not act for", async () => {
    const detail = await planned({ tenantId: "ad-a", processId: "p1" });
    const dropsBefore = deps.metrics.droppedEvents.length;
    expect(await receivePlanCompleted(deps, publishers, { account: ENGINE_B, detail })).toEqual({ offered: false });
    expect(await receivePlanCompleted(deps, publishers, { detail })).toEqual({ offered: false });
    expect(await inboxOf("ad-a")).toBe(0);
    expect(deps.metrics.droppedEvents.slice(dropsBefore)).toEqual([
      { event: "PlanCompleted", reason: "publisher_not_allowed" },
      { event: "PlanCompleted", reason: "publisher_not_allowed" },
    ]);
    expect(deps.log.entries).toContainEqual({
      level: "WARN",
      message: "PlanCompleted dropped: publisher may not act for the tenant",
      fields: { account: ENGINE_B, tenantId: "ad-a" },
    });
  });

  it("drops an InboxItemAnswered for another tenant's offer the same way", async () => {
    const detail = await planned({ tenantId: "ad-a", processId: "p2" });
    const offer = await receivePlanCompleted(deps, publishers, { account: SERVICE_ACCOUNT, detail });
    expect(offer.offered).toBe(true);
    const dropsBefore = deps.metrics.droppedEvents.length;
    const answered = { tenantId: "ad-a", itemId: offer.item!.id, accepted: true };
    expect(await receiveInboxAnswered(deps, publishers, { account: ENGINE_B, detail: answered })).toBeNull();
    expect(deps.metrics.droppedEvents.slice(dropsBefore)).toEqual([{ event: "InboxItemAnswered", reason: "publisher_not_allowed" }]);
  });

  it("counts a malformed detail as dropped too", async () => {
    const dropsBefore = deps.metrics.droppedEvents.length;
    expect(await receivePlanCompleted(deps, publishers, { account: SERVICE_ACCOUNT, detail: { planId: 7 } })).toEqual({ offered: false });
    expect(deps.metrics.droppedEvents.slice(dropsBefore)).toEqual([{ event: "PlanCompleted", reason: "invalid_detail" }]);
  });
});
