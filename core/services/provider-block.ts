/**
 * The provider refused a memory's block (docs/turns.md, "The provider's block"): an engine whose
 * request led with it was answered `invalid_encrypted_content`, or a signature or content error on
 * the `compaction` block. The memory notes it, and from then on every replay of it reads the
 * readable summary instead, until the next fold (which chains from that summary, not the block).
 */
import { invalid, notFound } from "../domain/errors.js";
import { blockFormat } from "../domain/native/memory-block.js";
import type { ProcessKey } from "../ports/store.js";
import type { ServiceDeps } from "./deps.js";

export interface BlockRefusal {
  /** The memory whose block the provider refused (the turn answer's `providerBlock.memoryId`). */
  memoryId: string;
  /** The provider's error code or message, as the engine got it. */
  error?: string | undefined;
}

/**
 * Records the refusal on the memory (once; a repeat changes nothing). A 404 for a memory the
 * process does not have, a 400 for one without a block, before anything is written.
 */
export async function recordBlockRefused(deps: ServiceDeps, key: ProcessKey, refusal: BlockRefusal): Promise<void> {
  const memory = await deps.store.getMemory(key, refusal.memoryId);
  if (!memory) throw notFound("memory", refusal.memoryId);
  const fold = memory.metadata.providerFold;
  const format = blockFormat(memory);
  if (!format || !fold?.block) {
    throw invalid("memory.no_block", `memory '${refusal.memoryId}' holds no provider block to refuse`, { fields: ["body.blockRefused.memoryId"] });
  }
  if (fold.refused) return;
  const at = deps.clock.now().toISOString();
  const noted = await deps.store.markBlockRefused(key, refusal.memoryId, { at, ...(refusal.error ? { error: refusal.error } : {}) });
  if (noted) deps.metrics.providerBlockRefused(format);
  deps.log.info("provider block refused", { processId: key.processId, memoryId: refusal.memoryId, error: refusal.error, noted });
}
