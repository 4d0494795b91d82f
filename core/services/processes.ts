/** Process records: upsert, read, list. */
import { notFound } from "../domain/errors.js";
import type { Page, Process } from "../domain/model.js";
import type { ProcessInput } from "../domain/fields.js";
import type { ProcessKey, ProcessState } from "../ports/store.js";
import type { CoreDeps } from "./deps.js";

export async function upsertProcess(
  deps: CoreDeps,
  tenantId: string,
  processId: string,
  body: ProcessInput,
): Promise<Process> {
  return deps.store.upsertProcess(tenantId, { processId, ...body }, deps.clock.now().toISOString());
}

/** The process's META, or a 404 (also for another tenant's process: the key decides the tenant). */
export async function requireProcess(deps: CoreDeps, key: ProcessKey): Promise<ProcessState> {
  const state = await deps.store.getProcess(key);
  if (!state) throw notFound("process", key.processId);
  return state;
}

export async function listProcesses(
  deps: CoreDeps,
  tenantId: string,
  options: { projectId?: string; limit: number; cursor?: string },
): Promise<Page<Process>> {
  return deps.store.listProcesses(tenantId, options);
}
