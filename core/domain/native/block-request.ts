/**
 * A turn's `request` when the summary it replays is a provider fold that kept its block
 * (docs/turns.md, "The provider's block"): for the format and model family that wrote it, the
 * block where the provider wants it and the kept turns after it as stored, reasoning included;
 * for any other, or once the provider refused the block, the readable chain. Pure.
 */
import type { Memory, Message } from "../model.js";
import { modelFamily } from "../model-windows.js";
import type { JsonObject, NativeFormat, ReplayFormat } from "./formats.js";
import { blockFormat } from "./memory-block.js";
import { CONTINUATION_TEXT, replayRequest, type ReplayOptions, type ReplayRequest } from "./replay-request.js";

/** What the answer says of the replayed summary's block (`providerBlock`). */
export interface BlockReplay {
  memoryId: string;
  format: NativeFormat;
  /** The request carries the block (true), or the readable chain in its place. */
  sent: boolean;
  /** Why not: the turn's `format`, its model's family, or the provider refused the block. */
  reason?: "format" | "model" | "refused";
}

/**
 * How the turn replays `head` (the newest summary): undefined when the turn names no format or
 * the summary holds no block.
 *
 * @example blockReplay(anthropicFold, "anthropic", "claude-fable-5-1") // { memoryId, format: "anthropic", sent: true }
 */
export function blockReplay(head: Memory | null, format: ReplayFormat | undefined, model: string | undefined): BlockReplay | undefined {
  const fold = head?.metadata.providerFold;
  const written = head ? blockFormat(head) : undefined;
  if (!head || !written || !fold?.block || !format) return undefined;
  const base = { memoryId: head.id, format: written };
  if (fold.refused) return { ...base, sent: false, reason: "refused" };
  if (format !== written) return { ...base, sent: false, reason: "format" };
  const family = modelFamily(model);
  if (family === undefined || family !== modelFamily(head.metadata.model)) return { ...base, sent: false, reason: "model" };
  return { ...base, sent: true };
}

/** The converter's stand-in first user turn, which a request that leads with a block does without. */
export const isContinuation = (m: JsonObject | undefined) =>
  Array.isArray(m?.content) && m.content.length === 1 && (m.content[0] as JsonObject)?.text === CONTINUATION_TEXT;

const NO_BLOCK = { staticBlock: "", dynamicBlock: "" };

/**
 * The request with `head`'s block (put back from its blob, if it has one): the Anthropic `compaction` block as the first message (an
 * assistant turn, as the API returned it), or OpenAI's compacted window as returned, then the
 * replay's messages the block does not stand for (`covered`), as stored. Nothing of the memory
 * block goes with it: the kept reasoning is bound to the engine's own `system` and `tools`.
 */
export function blockRequest(format: ReplayFormat, replay: readonly Message[], head: Memory, options: ReplayOptions): ReplayRequest {
  const covered = new Set(head.metadata.providerFold?.covered ?? []);
  const kept = replay.filter((m) => !covered.has(m.id));
  const { stripReasoningBefore: _kept, ...rest } = options;
  const block = head.native!.content as JsonObject[];
  if (format === "anthropic") {
    const built = replayRequest(format, kept, NO_BLOCK, rest) as { messages: JsonObject[] };
    const messages = isContinuation(built.messages[0]) ? built.messages.slice(1) : built.messages;
    return { system: [], messages: [{ role: "assistant", content: [...block] }, ...messages] };
  }
  const built = replayRequest(format, kept, NO_BLOCK, rest) as { input: JsonObject[]; prompt_cache_key?: string };
  return { ...built, input: [...block, ...built.input] };
}
