/** Builders for domain objects in tests. */
import { createUlidIds } from "../../core/adapters/ids.js";
import type { Memory, Message, Role } from "../../core/domain/model.js";

const ids = createUlidIds();

export function makeMessage(processId: string, overrides: Partial<Message> & { role?: Role } = {}): Message {
  const at = new Date();
  return {
    id: ids.message(at),
    processId,
    role: "USER",
    content: "hello there, this is a substantive message",
    tags: [],
    createdAt: at.toISOString(),
    archivedInMemoryId: null,
    tokens: 12,
    ...overrides,
  };
}

export function makeMemory(processId: string, overrides: Partial<Memory> = {}): Memory {
  const at = new Date();
  return {
    id: ids.memory(at),
    processId,
    kind: "ARCHIVED_CHAT",
    status: "OK",
    content: "summary",
    sourceRefs: [],
    metadata: { compactedMessages: 0, provider: "offline", model: "test" },
    createdAt: at.toISOString(),
    supersededAt: null,
    tokens: 2,
    ...overrides,
  };
}
