/** Hand-built snapshots for tools/invariants.ts's `findViolations`: messages, memories and META. */
import type { Memory, Message } from "../../core/domain/model.js";
import type { ProcessState } from "../../core/ports/store.js";
import type { Snapshot } from "../../tools/invariants.js";

export const key = { tenantId: "t", processId: "p" };
export const at = "2026-01-01T00:00:00.000Z";

export const message = (id: string, archivedInMemoryId: string | null, o: Partial<Message> = {}): Message => ({
  id,
  processId: "p",
  role: "USER",
  content: `text of ${id}`,
  tags: [],
  createdAt: at,
  archivedInMemoryId,
  tokens: 5,
  ...o,
});

/** An OK summary of `sourceRefs`; `prior`: the summary it supersedes. */
export const memory = (id: string, sourceRefs: string[], o: Partial<Memory> & { prior?: string } = {}): Memory => {
  const { prior, ...rest } = o;
  return {
    id,
    processId: "p",
    kind: "ARCHIVED_CHAT",
    status: "OK",
    content: `summary ${id}`,
    sourceRefs,
    metadata: { compactedMessages: sourceRefs.length, provider: "test", model: "test", ...(prior ? { supersededMemoryId: prior } : {}) },
    createdAt: at,
    supersededAt: null,
    tokens: 3,
    ...rest,
  };
};

/** The process with `activeSummaryId` on META, its replay the unsuperseded OK memories and the active messages. */
export function snapshot(messages: Message[], memories: Memory[], activeSummaryId: string | null): Snapshot {
  const state: ProcessState = {
    process: { processId: "p", projectId: "proj", allowsCrossProjectSpawn: false, createdAt: at },
    version: 1,
    replayEpoch: 0,
    activeSummaryId,
    lease: null,
    pendingArchive: null,
    hasUserMessage: true,
  };
  const active = memories.filter((m) => m.status === "OK" && m.supersededAt === null);
  return { key, state, messages, memories, view: { state, summaries: active, folds: [], messages: messages.filter((m) => m.archivedInMemoryId === null) } };
}
