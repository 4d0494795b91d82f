/**
 * The end-of-run checks of provider folds (tools/chaos/README.md, "Provider folds"): after a blob
 * sweep of each process and copy that folded with the provider, every memory a provider fold wrote
 * that a replay, an undo or an audit may read (OK, REVERTED) still keeps its block
 * (docs/summarizers.md, "Where the block is kept"): inline, or in the blob it names, present and
 * hashing to its name, and reading back exactly as the summarizer answered it; and a turn that
 * asks for the Anthropic request replays the newest summary's block first, exactly as answered, or
 * no block at all when that summary has none to send (docs/turns.md, "The provider's block").
 */
import { nativeHash } from "../../core/domain/native/blob-parts.js";
import type { Memory } from "../../core/domain/model.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { sweepBlobs } from "../../core/services/blob-sweep.js";
import { runTurn } from "../../core/services/turn.js";
import { withBlock } from "../../core/services/native-content.js";
import { blockViolations } from "../native-invariants.js";
import { expectedSummary, keyString } from "./checks.js";
import { foldsWithProvider } from "./native-messages.js";
import { QUIET, where, type ChaosRun, type Container, type Engine } from "./run-state.js";
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
  v.push(...(await replayedBlock(run, e, key, at, clean, memories)));
  return v;
}

/** A Claude turn's Anthropic request: the newest summary's block first as answered, or none. */
async function replayedBlock(run: ChaosRun, e: Engine, key: ProcessKey, at: string, clean: Container, memories: Memory[]): Promise<string[]> {
  const head = expectedSummary(memories);
  const turn = await runTurn(clean.deps, key, { ...QUIET, model: { ...QUIET.model, name: "claude-chaos-fake" }, format: "anthropic" });
  const messages = (turn.request as { messages?: Array<{ role: string; content: Array<{ type?: string }> }> } | undefined)?.messages ?? [];
  const compactions = messages.filter((m) => m.content.some((c) => c.type === "compaction"));
  const fold = head?.metadata.providerFold;
  if (!head || !fold?.block || fold.refused || head.metadata.provider !== "anthropic-compaction") {
    return compactions.length === 0 ? [] : [`${at}: a Claude turn replays ${compactions.length} compaction block(s) though its summary ${head?.id ?? "(none)"} sends none`];
  }
  const first = messages[0];
  const sent = first?.role === "assistant" ? e.blocks.get(blockTag({ format: "anthropic", content: first.content }) ?? "") : undefined;
  if (!first || turn.providerBlock?.sent !== true || compactions.length !== 1 || compactions[0] !== first) {
    return [`${at}: a Claude turn over provider fold ${head.id} sends ${compactions.length} compaction block(s), the first message ${first?.role ?? "none"} (providerBlock ${JSON.stringify(turn.providerBlock)})`];
  }
  if (sent === undefined || nativeHash({ format: "anthropic", content: first.content }) !== sent) {
    return [`${at}: a Claude turn replays a block of provider fold ${head.id} that its summarizer did not answer`];
  }
  run.stats.native.blocksReplayed++;
  return [];
}
