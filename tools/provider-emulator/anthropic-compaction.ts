/**
 * Anthropic's on-demand compaction, as pure functions: the signed `compaction` block the emulator
 * writes for a request with `compaction: { type: "summarize" }`, and the conversation a later
 * request means when its first block is such a block (the summarized messages put back in its
 * place), so that the thinking rules judge kept turns as the provider does.
 *
 * Rule sources (docs/integrations.md, "The provider emulator"): "Compaction overview", "Compaction
 * that keeps recent turns", "Compaction and preserved thinking", "Compaction in the background"
 * (platform.claude.com/docs/en/build-with-claude/...), and the SDK's `BetaCompactionBlock`,
 * `BetaCompactionConfig` and `Compaction*Error` types for field names and error codes.
 */
import { canonicalHash, canonicalJson, sha256Hex } from "./canonical-json.js";
import type { Signer } from "./signing.js";

export const COMPACTION_BETA = "compact-2026-09-04";

/** Models whose Models API entry reports `capabilities.compaction.summarize.supported` (the pages' supported models). */
export const COMPACTION_MODELS: readonly string[] = [
  "claude-fable-5-1", "claude-mythos-5-1", "claude-fable-5", "claude-mythos-5", "claude-mythos-preview",
  "claude-opus-5-5", "claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6",
  "claude-sonnet-5-5", "claude-sonnet-5", "claude-sonnet-4-6", "claude-haiku-5-5",
];

/** What the emulator remembers of a block it wrote: the whole conversation it stands for. */
export interface StoredCompaction {
  messages: any[];
  lastRole: string;
  /** Hash of the compaction request's `system` and `tools`. */
  context: string;
}

/** `system` and `tools` as the model reads them, hashed: what kept thinking is bound to besides the messages. */
const contextHash = (body: any) => canonicalHash({ system: blocksOf(body?.system ?? []).map(dropCache), tools: asArray(body?.tools).map(dropCache) });
const dropCache = (b: any) => (b && typeof b === "object" ? Object.fromEntries(Object.entries(b).filter(([k, v]) => k !== "cache_control" && v !== null)) : b);

export type CompactionRule =
  | "compaction_beta_missing"
  | "compaction_invalid_request"
  | "compaction_unsupported_model"
  | "compaction_block_ambiguous"
  | "compaction_block_misplaced"
  | "compaction_signature_invalid"
  | "compaction_content_mismatch"
  | "compaction_incomplete_turn"
  | "compaction_nothing_to_summarize"
  | "tool_result_without_call";

export interface CompactionFailure {
  ok: false;
  status: 400;
  rule: CompactionRule;
  message: string;
  body: { type: "error"; error: { type: "invalid_request_error"; message: string; details?: { error_code: string } } };
}

const asArray = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const blocksOf = (content: unknown): any[] => (typeof content === "string" ? [{ type: "text", text: content }] : asArray(content));

function fail(rule: CompactionRule, message: string, code: string | null = rule): CompactionFailure {
  const error = { type: "invalid_request_error" as const, message, ...(code ? { details: { error_code: code } } : {}) };
  return { ok: false, status: 400, rule, message, body: { type: "error", error } };
}

/** A block's signature: the hash of its summary, and an HMAC over that hash and its opaque content. */
export function signCompaction(signer: Signer, content: string, encrypted: string): string {
  const h = sha256Hex(content);
  const tag = signer.mac(`compaction\n${h}\n${encrypted}`);
  return Buffer.concat([Buffer.from(h, "hex"), Buffer.from(tag, "base64url")]).toString("base64");
}

export type ExpandedAnthropic =
  | { ok: true; body: any; block: null }
  | { ok: true; body: any; block: { content: string; keptFrom: number } }
  | CompactionFailure;

/**
 * The request as the model reads it: when its first block is a compaction block this emulator
 * wrote, the messages it summarized put back in its place. The rules: at most one block with
 * content ("compaction_block_ambiguous"), first in the conversation and not in `system`
 * ("compaction_block_misplaced"), its signature and its content unchanged; a block with null
 * content is a no-op. The first kept message must differ in role from the last summarized one,
 * or the API merges it into that message ("Compaction and preserved thinking"), so its thinking
 * and everything after it no longer match their prefix. A kept `tool_result` must answer a call
 * among the kept turns: each call and its result stay on the same side of the cut ("Compaction
 * that keeps recent turns"; the refusal's wording is the emulator's).
 */
export function expandCompaction(body: any, signer: Signer, store: ReadonlyMap<string, StoredCompaction>): ExpandedAnthropic {
  const messages = asArray(body?.messages);
  if (blocksOf(body?.system).some((b) => b?.type === "compaction")) {
    return fail("compaction_block_misplaced", "system: a `compaction` block may not be in `system`.");
  }
  const found: Array<[number, number]> = [];
  messages.forEach((m, i) => blocksOf(m?.content).forEach((b, j) => b?.type === "compaction" && b.content != null && found.push([i, j])));
  if (found.length > 1) return fail("compaction_block_ambiguous", "messages: more than one `compaction` block with content; send only the block returned last.");
  const withoutNoops = messages.map((m) =>
    Array.isArray(m?.content) ? { ...m, content: m.content.filter((b: any) => !(b?.type === "compaction" && b.content == null)) } : m,
  );
  if (found.length === 0) return { ok: true, body: { ...body, messages: withoutNoops }, block: null };
  const [i, j] = found[0]!;
  if (i !== 0 || j !== 0) return fail("compaction_block_misplaced", `messages.${i}.content.${j}: the \`compaction\` block must be the first block of the conversation.`);
  const block = blocksOf(messages[0].content)[0];
  const stored = readCompaction(signer, block, store);
  if (stored === "invalid") return fail("compaction_signature_invalid", "messages.0.content.0: Invalid `signature` in `compaction` block.");
  if (stored === "mismatch") return fail("compaction_content_mismatch", "messages.0.content.0: the `compaction` block's `content` differs from the text its `signature` recorded.");
  const rest = blocksOf(withoutNoops[0].content).filter((b) => b?.type !== "compaction");
  let kept = [...(rest.length > 0 ? [{ ...withoutNoops[0], content: rest }] : []), ...withoutNoops.slice(1)];
  const calls = new Set<string>();
  for (const [n, m] of kept.entries()) {
    for (const b of blocksOf(m?.content)) {
      if (m?.role === "assistant" && b?.type === "tool_use") calls.add(b.id);
      if (b?.type === "tool_result" && !calls.has(b.tool_use_id)) {
        return fail("tool_result_without_call", `messages.${n + 1}: \`tool_result\` for \`${b.tool_use_id}\`, whose \`tool_use\` is not among the messages after the compaction block.`, null);
      }
    }
  }
  const summarized = stored.messages.map((m) => ({ ...m }));
  // Kept thinking is valid only while `system` and `tools` are those of the compaction request
  // ("Compaction and preserved thinking"): under others the summary stands for another conversation.
  if (stored.context !== contextHash(body)) summarized.unshift({ role: "user", content: [{ type: "text", text: "(compacted under another system or tools)" }] });
  if (kept.length > 0 && kept[0].role === stored.lastRole && summarized.length > 0) {
    const last = summarized[summarized.length - 1];
    summarized[summarized.length - 1] = { role: last.role, content: [...blocksOf(last.content), ...blocksOf(kept[0].content)] };
    kept = kept.slice(1);
  }
  return { ok: true, body: { ...body, messages: [...summarized, ...kept] }, block: { content: String(block.content), keptFrom: summarized.length } };
}

function readCompaction(signer: Signer, block: any, store: ReadonlyMap<string, StoredCompaction>): StoredCompaction | "invalid" | "mismatch" {
  if (typeof block?.signature !== "string" || typeof block?.encrypted_content !== "string") return "invalid";
  const bytes = Buffer.from(block.signature, "base64");
  if (bytes.length !== 64) return "invalid";
  const h = bytes.subarray(0, 32).toString("hex");
  if (!signer.verifyMac(`compaction\n${h}\n${block.encrypted_content}`, bytes.subarray(32).toString("base64url"))) return "invalid";
  const plain = signer.open(block.encrypted_content);
  if (plain === null) return "invalid";
  let ref: unknown;
  try {
    ref = JSON.parse(plain)?.ref;
  } catch {
    return "invalid";
  }
  const stored = typeof ref === "string" ? store.get(ref) : undefined;
  if (!stored) return "invalid";
  return sha256Hex(String(block.content)) === h ? stored : "mismatch";
}

/**
 * Whether a compaction request may run: the beta header, `type: "summarize"`, no
 * `context_management` beside it (the SDK's `compaction` parameter), a model whose Models API
 * entry supports it, something to summarize, and no unfinished `assistant` turn at the end
 * ("Compaction that keeps recent turns": the API refuses a request that ends on tool calls
 * without their results).
 */
export function checkCompactionRequest(body: any, betas: readonly string[], expanded: any, models: readonly string[]): CompactionFailure | null {
  if (!betas.includes(COMPACTION_BETA)) return fail("compaction_beta_missing", `compaction: requires the \`anthropic-beta: ${COMPACTION_BETA}\` header.`, null);
  if (body.compaction?.type !== "summarize") return fail("compaction_invalid_request", "compaction.type: Input should be 'summarize'.", null);
  if (body.context_management != null) return fail("compaction_invalid_request", "compaction: cannot be combined with `context_management`.", null);
  if (!models.includes(String(body.model))) return fail("compaction_unsupported_model", `compaction: model \`${body.model}\` does not support compaction.`, null);
  const all = asArray(expanded.messages);
  if (all.length === 0 || !all.some((m) => blocksOf(m?.content).length > 0)) {
    return fail("compaction_nothing_to_summarize", "messages: no `user` or `assistant` content to summarize.");
  }
  const sent = asArray(body.messages);
  const last = sent[sent.length - 1];
  if (last?.role === "assistant" && blocksOf(last.content).some((b) => b?.type === "tool_use")) {
    return fail("compaction_incomplete_turn", `messages.${sent.length - 1}: the compaction request ends on an \`assistant\` turn whose tool calls have no results.`);
  }
  return null;
}

/** The readable text of a message, for the emulator's summaries: text, tool calls and results; never thinking. */
export function messageText(m: any): string {
  return blocksOf(m?.content)
    .map((b) => {
      if (b?.type === "text") return String(b.text);
      if (b?.type === "tool_use") return `${b.name}(${JSON.stringify(b.input ?? {})})`;
      if (b?.type === "tool_result") return typeof b.content === "string" ? b.content : blocksOf(b.content).map((c) => c?.text ?? "").join(" ");
      if (b?.type === "compaction") return String(b.content ?? "");
      return "";
    })
    .filter((s) => s !== "")
    .join(" ");
}

/**
 * The emulator's summary of a compaction request: `scripted` when the test gave one, else every
 * sent message's text cut to 240 characters, the whole cut to `max_tokens` (at 4 characters a
 * token).
 */
export function emulatedSummary(body: any, scripted?: string): string {
  if (scripted !== undefined) return scripted;
  const lines = asArray(body?.messages).map((m) => `${m?.role}: ${messageText(m).slice(0, 240)}`);
  const text = `Summary of the conversation so far.\n${lines.join("\n")}`;
  const max = Number.isFinite(body?.max_tokens) ? Math.max(16, body.max_tokens * 4) : text.length;
  return text.slice(0, max);
}

/**
 * The answer to a compaction request: one assistant message holding the signed block alone,
 * `stop_reason: "compaction"`. The block's opaque content names the stored conversation; its
 * tokens are reported as a `compaction` entry of `usage.iterations`, not in the top-level fields
 * (the SDK's `BetaIterationsUsage`).
 */
export function buildCompactionAnswer(
  expanded: any,
  summary: string,
  options: { signer: Signer; id: string; store: Map<string, StoredCompaction> },
): Record<string, any> {
  const messages = asArray(expanded.messages);
  const ref = canonicalHash({ system: expanded.system ?? null, tools: asArray(expanded.tools), messages });
  options.store.set(ref, { messages, lastRole: String(messages[messages.length - 1]?.role), context: contextHash(expanded) });
  const encrypted = options.signer.seal(canonicalJson({ kind: "compaction", ref }));
  const block = { type: "compaction", content: summary, encrypted_content: encrypted, signature: signCompaction(options.signer, summary, encrypted) };
  const input = Math.ceil(JSON.stringify(messages).length / 4);
  const output = Math.ceil(summary.length / 4);
  return {
    id: options.id,
    type: "message",
    role: "assistant",
    model: expanded.model ?? "claude-emulated",
    content: [block],
    stop_reason: "compaction",
    stop_sequence: null,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      iterations: [{ type: "compaction", input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: null }],
    },
  };
}

/** The Models API entry of `model` (`GET /v1/models/{id}`), with its compaction capability. */
export function modelInfo(model: string, models: readonly string[]): Record<string, any> {
  const supported = models.includes(model);
  return {
    type: "model",
    id: model,
    display_name: model,
    created_at: "2026-01-01T00:00:00Z",
    allowed_fallback_models: null,
    deprecated_at: null,
    lifecycle: "active",
    line: null,
    max_input_tokens: null,
    max_tokens: null,
    capabilities: { compaction: { supported, summarize: { supported } } },
  };
}
