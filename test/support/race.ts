/** Helpers for race tests: a summary that holds a compaction mid-flight, and a seeded chat. */
import type { Message, Role } from "../../core/domain/model.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { SummarizeInput, SummarizeOutcome } from "../../core/ports/summarizer.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";

/** `answer` waits for `release()`; `started` resolves when the call has begun. */
export function gate() {
  let open!: () => void;
  let begun!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const started = new Promise<void>((r) => (begun = r));
  const answer = async (input: SummarizeInput): Promise<SummarizeOutcome> => {
    begun();
    await opened;
    return { ok: true, summary: `gated summary of ${input.messages.length} messages` };
  };
  return { answer, started, release: () => open() };
}

/** Creates the process with a (pinned) task and `n` substantive messages, the last one USER. */
export async function seedChat(deps: ServiceDeps, key: ProcessKey, n: number): Promise<Message[]> {
  await upsertProcess(deps, key.tenantId, key.processId, { projectId: "proj" });
  const messages = [(await appendMessage(deps, key, { role: "USER", content: "Ship the billing importer." })).message];
  for (let i = 0; i < n; i++) {
    const role: Role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    messages.push((await appendMessage(deps, key, { role, content: `note ${i}: column ${i} is validated.` })).message);
  }
  return messages;
}
