/**
 * The stored-data invariants of docs/compaction.md ("The commit protocol"), checked on an export's
 * outline before an import writes anything (docs/api.md, "Export and import"): a file that a
 * settled process could not have produced (an edited one, or one read while a fold or an undo was
 * half done) would otherwise give a process with two heads, or with messages in no replay and no
 * summary. Pure, and linear in the number of messages and memories.
 */
import type { Memory } from "./model.js";

/** What the check reads of an outline: the head it names, every memory, and where each archived message went. */
export interface ConsistencyInput {
  activeSummaryId: string | null;
  memories: readonly Memory[];
  /** Each archived message's id, to the memory it is archived into. */
  archivedInto: ReadonlyMap<string, string>;
  /** Every message id the file holds. */
  messageIds: { has(id: string): boolean };
}

/**
 * The first invariant the outline breaks, in words, or null when it holds them all:
 * - at most one OK, unsuperseded memory (the head), and it is the process's active summary;
 * - every archived message is archived into an OK memory whose supersede chain leads to the head
 *   (or it is the range marker an undone memory took with it);
 * - every OK memory's chain leads to the head, and every original it folded, where the file holds
 *   it, is archived into it.
 */
export function outlineInconsistency({ activeSummaryId, memories, archivedInto, messageIds }: ConsistencyInput): string | null {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const heads = memories.filter((m) => m.status === "OK" && m.supersededAt === null);
  if (heads.length > 1) return `${heads.length} active summaries (${heads.map((m) => m.id).join(", ")}); a process has one`;
  const head = heads[0]?.id ?? null;
  if (head !== activeSummaryId) return `the process names '${activeSummaryId ?? "none"}' as its active summary, the memories '${head ?? "none"}'`;

  // Memoised per memory: every chain is walked once in all, however many messages share it.
  const leadsToHead = new Map<string, boolean>();
  const chainOk = (start: Memory): boolean => {
    const seen: string[] = [];
    let m: Memory | undefined = start;
    let ok = false;
    for (let steps = 0; m && steps <= memories.length; steps++) {
      const known = leadsToHead.get(m.id);
      if (known !== undefined) {
        ok = known;
        break;
      }
      seen.push(m.id);
      if (m.status !== "OK") break;
      if (m.supersededAt === null) {
        ok = m.id === head;
        break;
      }
      m = m.supersededByMemoryId ? byId.get(m.supersededByMemoryId) : undefined;
    }
    for (const id of seen) leadsToHead.set(id, ok);
    return ok;
  };

  for (const [messageId, memoryId] of archivedInto) {
    const memory = byId.get(memoryId);
    if (!memory) return `message '${messageId}' is archived into memory '${memoryId}', which is not in the file`;
    if (memory.status !== "OK") {
      if (memory.status === "REVERTED" && memory.metadata.markerMessageId === messageId) continue;
      return `message '${messageId}' is archived into memory '${memoryId}', which is ${memory.status}: no replay and no summary would hold it`;
    }
    if (!chainOk(memory)) return `message '${messageId}' is archived into memory '${memoryId}', whose chain does not lead to the active summary`;
  }
  for (const memory of memories) {
    if (memory.status !== "OK") continue;
    if (!chainOk(memory)) return `memory '${memory.id}' is OK, but its chain does not lead to the active summary`;
    for (const id of memory.sourceRefs) {
      if (!messageIds.has(id)) continue;
      const into = archivedInto.get(id);
      if (into !== memory.id) return `memory '${memory.id}' folded message '${id}', which is ${into === undefined ? "active" : `archived into '${into}'`}`;
    }
  }
  return null;
}
