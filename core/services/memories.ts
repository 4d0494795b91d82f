/** The summary chain of a process, newest first, for audit and the inspector. */
import type { Memory } from "../domain/model.js";
import type { ProcessKey } from "../ports/store.js";
import type { CoreDeps } from "./deps.js";
import { requireProcess } from "./processes.js";

export async function listMemories(
  deps: CoreDeps,
  key: ProcessKey,
  filter: { kind: "ARCHIVED_CHAT"; includeSuperseded: boolean; includeFailed: boolean },
): Promise<Memory[]> {
  const memories = await deps.store.listMemories(key);
  if (memories.length === 0) await requireProcess(deps, key);
  return memories.filter(
    (m) =>
      m.kind === filter.kind &&
      (filter.includeFailed || m.status === "OK") &&
      (filter.includeSuperseded || m.supersededAt === null),
  );
}
