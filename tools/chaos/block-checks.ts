/**
 * The end-of-run checks of provider folds (tools/chaos/README.md, "Provider folds"): after a blob
 * sweep of each process and copy that folded with the provider, every memory a provider fold wrote
 * that a replay, an undo or an audit may read (OK, REVERTED) still keeps its block
 * (docs/summarizers.md, "Where the block is kept"): inline, or in the blob it names, present and
 * hashing to its name, and reading back exactly as the summarizer answered it.
 */
import { nativeHash } from "../../core/domain/native/blob-parts.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { sweepBlobs } from "../../core/services/blob-sweep.js";
import { withBlock } from "../../core/services/native-content.js";
import { blockViolations } from "../native-invariants.js";
import { keyString } from "./checks.js";
import { foldsWithProvider } from "./native-messages.js";
import { where, type ChaosRun, type Container, type Engine } from "./run-state.js";
import { blockTag } from "./summarizer.js";

export async function providerBlockChecks(run: ChaosRun, engines: readonly Engine[], clean: Container): Promise<string[]> {
  const v: string[] = [];
  for (const e of engines.filter(foldsWithProvider)) {
    const copies = run.copies.filter((c) => c.tenantId === e.key.tenantId && c.processId.startsWith(`${e.key.processId}-copy`));
    for (const key of [e.key, ...copies]) v.push(...(await processBlocks(run, e, key, clean)));
  }
  return v;
}

async function processBlocks(run: ChaosRun, e: Engine, key: ProcessKey, clean: Container): Promise<string[]> {
  const at = key === e.key ? where(e) : keyString(key);
  // The sweep deletes the blobs nothing names; a block's blob is named by its memory.
  await sweepBlobs(clean.deps, key);
  const memories = await run.inner.listMemories(key);
  const v = await blockViolations(clean.deps, key, memories);
  for (const m of memories) {
    if (m.metadata.provider !== "anthropic-compaction" || (m.status !== "OK" && m.status !== "REVERTED")) continue;
    if (!m.metadata.providerFold?.block) {
      v.push(`${at}: memory ${m.id} (${m.status}) was written by the provider fold and keeps no block (${JSON.stringify(m.metadata.providerFold)})`);
      continue;
    }
    if (!m.native && !m.nativeBlob) {
      v.push(`${at}: memory ${m.id} (${m.status}) says it keeps its block and has none`);
      continue;
    }
    const block = await withBlock(clean.deps, key, m).then(
      (read) => read.native,
      () => undefined, // a missing blob: reported by blockViolations
    );
    if (!block) continue;
    const sent = e.blocks.get(blockTag(block) ?? "");
    if (sent === undefined) v.push(`${at}: memory ${m.id} keeps a block its summarizer never answered`);
    else if (nativeHash(block) !== sent) v.push(`${at}: memory ${m.id} keeps a block of hash ${nativeHash(block)}, its summarizer answered ${sent}`);
    else {
      run.stats.native.blocks++;
      if (m.nativeBlob) run.stats.native.blockBlobs++;
      if (key !== e.key) run.stats.native.blockCopies++;
    }
  }
  return v;
}
