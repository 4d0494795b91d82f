/**
 * One tenant's data over the HTTP API, for the fuzz and tenant-isolation tests: a process with a
 * conversation, a committed summary (memory), a plan-completion offer in the inbox and settings.
 * Every id it returns exists, so requests can aim at real items as well as at made-up ones.
 */
import type { LocalService } from "../../../local/server.js";
import type { apiClient } from "../service.js";
import { steppingClock } from "../stepping-clock.js";

type Api = ReturnType<typeof apiClient>;

export interface TenantData {
  tenantId: string;
  key: string;
  processId: string;
  /** A worker of `processId` in the same project. */
  workerId: string;
  memoryId: string;
  /** An open RECOMPACTION_OFFER. */
  itemId: string;
  /** Distinctive words of this tenant's messages (for search and leak checks). */
  secret: string;
}

async function ok<T = any>(p: Promise<{ status: number; body: T }>, want = [200, 201]): Promise<T> {
  const r = await p;
  if (!want.includes(r.status)) throw new Error(`fixture request failed with ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function seedTenant(
  api: Api,
  service: LocalService,
  options: { tenantId: string; key: string; processId: string; secret: string; keepRecent?: number },
): Promise<TenantData> {
  const { key, processId, secret, tenantId } = options;
  const call = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body !== undefined ? { body } : {}) });
  await ok(call("PUT", `/v1/processes/${processId}`, { projectId: "proj", name: `${secret} engine`, title: `${secret} title` }));
  // Every reading a distinct millisecond: the plan's completion time falls between two messages.
  const clock = steppingClock();
  service.deps.clock = clock;
  const say = async (role: string, content: string, tags?: string[]) => {
    await ok(call("POST", `/v1/processes/${processId}/messages`, { role, content, ...(tags ? { tags } : {}) }));
  };
  await say("USER", `Original task: ${secret} migration of the ledger.`);
  for (let i = 0; i < 8; i++) await say(i % 2 ? "USER" : "ASSISTANT", `${secret} note ${i}: the ledger batch ${i} is verified.`);
  await say("USER", `Let's plan the ${secret} rollout.`, ["MODE:plan"]);
  await say("ASSISTANT", `${secret} step 1: dry run`);
  await say("USER", `${secret} step 2: go`);
  const completedAt = clock.now().toISOString();
  for (let i = 0; i < 10; i++) await say(i % 2 ? "USER" : "ASSISTANT", `${secret} later ${i}: numbers reconciled.`);
  const compaction = await ok(
    call("POST", `/v1/processes/${processId}/compaction`, { model: { contextWindow: 100_000 }, force: "HARD" }),
  );
  if (!compaction.memoryId) throw new Error(`fixture compaction did not commit: ${JSON.stringify(compaction)}`);
  await service.bus.deliver({
    source: "vancetope.plan",
    detailType: "PlanCompleted",
    detail: { tenantId, processId, planId: "plan-1", topicLabel: `${secret}-rollout`, completedAt },
  });
  await service.bus.drain();
  const inbox = await ok(call("GET", `/v1/inbox?processId=${processId}`));
  const item = inbox.items[0];
  if (!item) throw new Error("fixture offer was not created");
  const workerId = `${processId}-worker`;
  await ok(call("PUT", `/v1/processes/${workerId}`, { projectId: "proj", parentProcessId: processId }));
  await ok(call("PUT", "/v1/settings", { keepRecent: options.keepRecent ?? 8 }));
  return { tenantId, key, processId, workerId, memoryId: compaction.memoryId, itemId: item.id, secret };
}
