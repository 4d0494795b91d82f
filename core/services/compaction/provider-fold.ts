/**
 * Provider folds in the fold pipeline (docs/summarizers.md, "Provider folds"): where the cut may
 * fall, what the provider is sent besides the readable input (the messages' native content, the
 * previous block), and what the memory records of the block.
 */
import { storedNative, type Memory, type Message } from "../../domain/model.js";
import { blockBytes, blockFormat } from "../../domain/native/memory-block.js";
import { anthropicCut } from "../../domain/native/provider-fold.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { Summarizer } from "../../ports/summarizer.js";
import type { ServiceDeps } from "../deps.js";
import { withBlock, withNative } from "../native-content.js";
import type { ChunkedSummary, SummaryRequest } from "./summary-chunks.js";

/** What a provider fold sends, and what of it stays active. */
export interface ProviderFoldRange {
  /** The messages to archive (the fold, cut where the provider's rules allow). */
  fold: Message[];
  /**
   * The messages the provider summarizes: every active message up to the cut that the previous
   * block does not already stand for, pinned and protected ones included, so the kept turns
   * follow the summarized ones without a gap.
   */
  sent: Message[];
  /** Active messages the previous block stood for: the new block, which chains it, stands for them too. */
  inherited: string[];
}

/** True when the memory has a block in `format` that its provider has not refused (docs/turns.md, "The provider's block"). */
const chainsBlock = (memory: Memory | null, format: string | undefined): memory is Memory =>
  memory !== null && format !== undefined && blockFormat(memory) === format && !memory.metadata.providerFold?.refused;

/** Ids of active messages a memory's block stands for although they stay active (pinned, the turn's own). */
export const coveredByBlock = (memory: Memory | null, format: string | undefined): ReadonlySet<string> =>
  new Set(chainsBlock(memory, format) ? (memory.metadata.providerFold?.covered ?? []) : []);

/**
 * The range of a provider fold: the active messages through the last folded one, less those the
 * previous block covers; for Anthropic cut at a tool-group boundary whose last message differs in
 * role from the first kept one (`anthropicCut`). Other summarizers, or a fold no cut fits, fold as
 * asked and send the fold.
 */
export function providerFoldRange(summarizer: Summarizer, view: ActiveView, fold: Message[], prior: Memory | null): ProviderFoldRange {
  const format = summarizer.foldFormat;
  if (!format || fold.length === 0) return { fold, sent: fold, inherited: [] };
  const lastAt = view.messages.findIndex((m) => m.id === fold[fold.length - 1]!.id);
  if (lastAt < 0) return { fold, sent: fold, inherited: [] };
  const before = coveredByBlock(prior, format);
  const inherited = view.messages.filter((m) => before.has(m.id)).map((m) => m.id);
  let sent = view.messages.slice(0, lastAt + 1).filter((m) => !before.has(m.id));
  if (format === "anthropic") {
    const kept = view.messages.slice(lastAt + 1);
    const answered = new Set(kept.flatMap((m) => [m.toolCallId, ...(m.toolCallIds ?? [])]).filter((id): id is string => id !== undefined));
    sent = anthropicCut(sent, kept[0], answered);
  }
  const inRange = new Set(sent.map((m) => m.id));
  const cut = fold.filter((m) => inRange.has(m.id));
  return cut.length > 0 ? { fold: cut, sent, inherited } : { fold, sent: fold, inherited };
}

/**
 * What a provider fold summarizes: the range with its native content put back, the previous
 * memory's block when it is in the provider's format (the chain), and the process's
 * `conversation` (the engine's `system` and `tools`).
 */
export async function providerFoldAsk<A extends SummaryRequest>(deps: ServiceDeps, key: ProcessKey, summarizer: Summarizer, prior: Memory | null, ask: A, sent: Message[]): Promise<A> {
  const format = summarizer.foldFormat;
  if (!format) return ask;
  // A view may have been cloned (structuredClone keeps no stored native): such messages are read again.
  const unread = sent.filter((m) => m.native === undefined && storedNative(m) === undefined);
  const read = new Map((unread.length > 0 ? await deps.store.getMessages(key, unread.map((m) => m.id)) : []).map((m) => [m.id, m]));
  const fold = await withNative(deps, key, sent.map((m) => read.get(m.id) ?? m));
  // A refused block is not chained: the fold starts from the prior readable summary instead.
  const priorNative = chainsBlock(prior, format) ? (await withBlock(deps, key, prior)).native : undefined;
  // The engine's own system and tools, recorded on the process: the provider binds kept reasoning to them.
  const conversation = (await deps.store.getProcess(key))?.process.conversation;
  return {
    ...ask,
    fold,
    providerFold: {
      ...ask.providerFold,
      ...(priorNative ? { priorNative } : {}),
      ...(conversation?.system !== undefined ? { system: conversation.system } : {}),
      ...(conversation?.tools ? { tools: conversation.tools } : {}),
    },
  };
}

/**
 * `metadata.providerFold` of a provider fold's summary: its format, whether the memory keeps the
 * block, and why not (the provider's note; a block past `maxBytes`, the most a memory keeps: with a
 * blob store NATIVE_BLOCK_MAX_BYTES, without one what its item keeps inline; a summary another
 * summarizer wrote after a failure).
 */
export function providerFoldMetadata(
  summarizer: Summarizer,
  by: Pick<Summarizer, "provider">,
  summary: ChunkedSummary,
  range: ProviderFoldRange,
  maxBytes: number,
): { providerFold?: NonNullable<Memory["metadata"]["providerFold"]> } {
  const format = summarizer.foldFormat;
  if (!format || !summary.ok) return {};
  const folded = new Set(range.fold.map((m) => m.id));
  const covered = [...range.inherited, ...range.sent.filter((m) => !folded.has(m.id)).map((m) => m.id)];
  const block = { format, block: true, ...(covered.length > 0 ? { covered } : {}) };
  if (by.provider !== summarizer.provider) return { providerFold: { format, block: false, note: `fallback: written by ${by.provider}` } };
  if (!summary.native) return { providerFold: { format, block: false, note: summary.nativeNote ?? "no_block" } };
  const bytes = blockBytes(summary.native);
  if (bytes > maxBytes) return { providerFold: { format, block: false, note: `too_large: the block has ${bytes} bytes, a memory keeps at most ${maxBytes}` } };
  return { providerFold: block };
}
