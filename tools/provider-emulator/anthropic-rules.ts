/**
 * Anthropic Messages rules on thinking blocks, as pure functions: how the emulator signs the
 * thinking it issues (bound to the block's text and to everything before it) and how it judges
 * the thinking blocks a later request sends back.
 */
import { canonicalHash, canonicalJson, sha256Hex } from "./canonical-json.js";
import type { Signer } from "./signing.js";

export const THINKING_BINDING_BETA = "thinking-binding-controls-2026-08-01";

/** What the scripted model "says" in one Messages answer. */
export interface AnthropicTurnScript {
  /** The thinking text (default: a generated sentence); `false` answers without thinking. */
  thinking?: string | false;
  /** Issue the reasoning as a `redacted_thinking` block (opaque `data`) instead. */
  redacted?: boolean;
  text?: string;
  toolUses?: Array<{ id?: string; name: string; input?: Record<string, unknown> }>;
}

export interface AnthropicBlockRef {
  /** `messages.{i}.content.{j}`, the form Anthropic's errors and `input_transformations` use. */
  path: string;
  type: "thinking" | "redacted_thinking";
  /** `signature` of a thinking block, `data` of a redacted one. */
  token: string;
}

export interface AnthropicDroppedBlock extends AnthropicBlockRef {
  reason: "prefix_binding_mismatch";
}

/** One assistant turn the emulator issued, keyed by its non-thinking blocks. */
export interface IssuedAnthropicTurn {
  key: string;
  responseId: string;
  thinking: AnthropicBlockRef[];
}

export interface AnthropicInputTransformation {
  type: "thinking_dropped";
  path: string;
  reason: "prefix_binding_mismatch";
}

export type AnthropicCheck =
  | {
      ok: true;
      verified: AnthropicBlockRef[];
      dropped: AnthropicDroppedBlock[];
      inputTransformations: AnthropicInputTransformation[];
    }
  | { ok: false; status: 400; rule: AnthropicRule; message: string; body: AnthropicErrorBody };

export type AnthropicRule =
  | "forced_tool_use_with_thinking"
  | "tool_loop_thinking_missing" | "thinking_signature_invalid" | "thinking_prefix_mismatch";

export interface AnthropicErrorBody {
  type: "error";
  error: { type: "invalid_request_error"; message: string };
}

export interface AnthropicCheckOptions {
  signer: Signer;
  /** Turns this emulator issued, by `anthropicTurnKey`. */
  issued: ReadonlyMap<string, IssuedAnthropicTurn>;
  /**
   * Models with preserved thinking run the prefix check (default true). Without it only the
   * block's own text is bound, as on older models.
   */
  preservedThinking?: boolean;
}
const asArray = (v: unknown): any[] => (Array.isArray(v) ? v : []);

/** Content as the model sees it: string content as one text block, `cache_control` left out. */
function normalizeBlocks(content: unknown): unknown[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return asArray(content).map(normalizeBlock);
}

function normalizeBlock(block: any): unknown {
  if (block === null || typeof block !== "object") return block;
  const { cache_control: _cache, ...rest } = block;
  // A null member (e.g. `citations: null`) shows the model nothing, so it is no change.
  for (const k of Object.keys(rest)) if (rest[k] === null) delete rest[k];
  if (rest.type === "tool_result" && rest.content !== undefined) rest.content = normalizeBlocks(rest.content);
  return rest;
}

function normalizeSystem(system: unknown): unknown[] {
  if (system === undefined || system === null) return [];
  return normalizeBlocks(system);
}

/**
 * The hash of a block's prefix: top-level `system` and `tools`, every message before message
 * `i`, and the blocks before block `j` of message `i` (`messages` may be one shorter than `i`
 * when the block is in the answer being built). Rule source: "Preserved thinking" (https://platform.claude.com/docs/build-with-claude/preserved-thinking):
 * "The top-level system prompt, tools, and messages before the block are its prefix."
 */
export function anthropicPrefixHash(body: any, i: number, head: readonly unknown[]): string {
  return prefixHasher(body)(i, head);
}

/**
 * The prefix hashes of one request body as it stands (later edits unseen): `system`, `tools` and the
 * messages as a chain, each link over the one before and one message, so each is hashed once.
 */
export function prefixHasher(body: any): (i: number, head: readonly unknown[]) => string {
  const chain = [canonicalHash({ system: normalizeSystem(body?.system), tools: asArray(body?.tools).map(normalizeBlock) })];
  const messages = asArray(body?.messages);
  return (i, head) => {
    while (chain.length <= i) {
      const m = messages[chain.length - 1];
      chain.push(sha256Hex(`${chain[chain.length - 1]}\n${canonicalJson({ role: m?.role, content: normalizeBlocks(m?.content) })}`));
    }
    return sha256Hex(`${chain[i]}\n${canonicalJson(head.map(normalizeBlock))}`);
  };
}

/** Identifies an assistant turn by its blocks other than thinking, as normalized content. */
export function anthropicTurnKey(content: unknown): string {
  const rest = normalizeBlocks(content).filter(
    (b: any) => b?.type !== "thinking" && b?.type !== "redacted_thinking",
  );
  return canonicalHash(rest);
}

/** A thinking block's signature: its prefix hash and an HMAC over that hash and the text. */
export function signThinking(signer: Signer, thinking: string, prefixHash: string): string {
  const tag = signer.mac(`thinking\n${prefixHash}\n${sha256Hex(thinking)}`);
  return Buffer.concat([Buffer.from(prefixHash, "hex"), Buffer.from(tag, "base64url")]).toString("base64");
}

/** A redacted_thinking block's `data`: the text and prefix hash sealed. */
export function sealRedactedThinking(signer: Signer, thinking: string, prefixHash: string): string {
  return signer.seal(canonicalJson({ kind: "redacted_thinking", ph: prefixHash, t: thinking }));
}

/** The prefix hash a block was issued under, or null when the block is not one this signer issued unchanged. */
export function readThinkingBinding(signer: Signer, block: any): string | null {
  if (block?.type === "thinking") {
    if (typeof block.signature !== "string" || typeof block.thinking !== "string") return null;
    const bytes = Buffer.from(block.signature, "base64");
    if (bytes.length !== 64) return null;
    const ph = bytes.subarray(0, 32).toString("hex");
    const tag = bytes.subarray(32).toString("base64url");
    return signer.verifyMac(`thinking\n${ph}\n${sha256Hex(block.thinking)}`, tag) ? ph : null;
  }
  if (block?.type === "redacted_thinking") {
    const plain = typeof block.data === "string" ? signer.open(block.data) : null;
    if (plain === null) return null;
    try {
      const parsed = JSON.parse(plain);
      return parsed?.kind === "redacted_thinking" && typeof parsed.ph === "string" ? parsed.ph : null;
    } catch {
      return null;
    }
  }
  return null;
}

const isThinking = (b: any) => b?.type === "thinking" || b?.type === "redacted_thinking";

/** True when the request turns thinking on (`enabled` with a budget, or `adaptive`). */
export function anthropicThinkingOn(body: any): boolean {
  const type = body?.thinking?.type;
  return type === "enabled" || type === "adaptive";
}

export function anthropicErrorBody(message: string): AnthropicErrorBody {
  return { type: "error", error: { type: "invalid_request_error", message } };
}

function fail(rule: AnthropicRule, message: string): AnthropicCheck {
  return { ok: false, status: 400, rule, message, body: anthropicErrorBody(message) };
}

/**
 * Judges the thinking blocks of a Messages request.
 *
 * 0. Manual thinking (`enabled`) with a `tool_choice` that forces tool use is a 400. Rule source:
 *    "Thinking in tool and multi-turn workflows"
 *    (https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows), "Limit tool
 *    choice to auto or none in manual mode". The wording of that error is not on the page.
 * 1. Tool loop: when the last message answers tool calls, the assistant turn before it must
 *    start with its thinking block. Rule source: the same page, "Pass thinking blocks back
 *    complete and unmodified: when you return a tool result, the thinking blocks from the
 *    assistant message must come back with it" (and "Extended thinking",
 *    https://docs.anthropic.com/claude/docs/build-with-claude/extended-thinking). A turn this emulator
 *    issued must start with thinking exactly when it was issued with thinking (adaptive thinking
 *    may answer without); a turn it did not issue must start with thinking when the request uses
 *    `enabled` thinking. The message is the API's own wording.
 * 2. Every thinking / redacted_thinking block must carry the signature it was issued with over its
 *    unchanged text, else 400 ("Prefix checks on thinking blocks",
 *    https://platform.claude.com/docs/build-with-claude/preserved-thinking/prefix-checks; the SDK's
 *    `ThinkingBlockParam`: "a modified block results in a 400 invalid_request_error").
 * 3. Prefix check: a block whose prefix differs from the one it was issued under fails; 400 with
 *    the error of "Fix a thinking block bound to a different conversation"
 *    (https://platform.claude.com/docs/build-with-claude/preserved-thinking/fix-bound-to-a-different-conversation),
 *    or, with `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`, the block and the
 *    rest of that turn's consecutive thinking blocks are dropped and listed as `thinking_dropped`
 *    entries (shape from the SDK's `BetaThinkingDroppedInputTransformation`).
 */
export function checkAnthropicRequest(body: any, options: AnthropicCheckOptions): AnthropicCheck {
  const messages = asArray(body?.messages);
  const verified: AnthropicBlockRef[] = [];
  const dropped: AnthropicDroppedBlock[] = [];
  // With thinking off the API does not use earlier thinking, so the emulator does not judge it.
  if (!anthropicThinkingOn(body)) return { ok: true, verified, dropped, inputTransformations: [] };

  const forced = body?.tool_choice?.type;
  if (body.thinking.type === "enabled" && (forced === "any" || forced === "tool")) {
    return fail("forced_tool_use_with_thinking", "Thinking may not be enabled when tool_choice forces tool use.");
  }

  const last = messages[messages.length - 1];
  const inToolLoop =
    last?.role === "user" && normalizeBlocks(last.content).some((b: any) => b?.type === "tool_result");
  const turnIndex = messages.length - 2;
  const turn = messages[turnIndex];
  if (inToolLoop && turn?.role === "assistant") {
    const blocks = normalizeBlocks(turn.content);
    const issued = options.issued.get(anthropicTurnKey(turn.content));
    const mustThink = issued ? issued.thinking.length > 0 : body.thinking.type === "enabled";
    const first: any = blocks[0];
    if (mustThink && !isThinking(first)) {
      return fail(
        "tool_loop_thinking_missing",
        `messages.${turnIndex}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type ?? "nothing"}\`. ` +
          "When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). " +
          "We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. " +
          "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
      );
    }
  }

  const dropOnMismatch = body?.thinking?.block_binding?.prefix_mismatch_behavior === "drop_block";
  const prefixOf = prefixHasher(body);
  const preserved = options.preservedThinking ?? true;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role !== "assistant") continue;
    const blocks = normalizeBlocks(m.content);
    let droppingRun = false;
    for (let j = 0; j < blocks.length; j++) {
      const block: any = blocks[j];
      if (!isThinking(block)) {
        droppingRun = false;
        continue;
      }
      const ref: AnthropicBlockRef = {
        path: `messages.${i}.content.${j}`,
        type: block.type,
        token: block.type === "thinking" ? String(block.signature ?? "") : String(block.data ?? ""),
      };
      if (droppingRun) {
        dropped.push({ ...ref, reason: "prefix_binding_mismatch" });
        continue;
      }
      const issuedUnder = readThinkingBinding(options.signer, block);
      if (issuedUnder === null) {
        return fail("thinking_signature_invalid", `${ref.path}: Invalid \`signature\` in \`${block.type}\` block.`);
      }
      if (preserved && issuedUnder !== prefixOf(i, blocks.slice(0, j))) {
        if (!dropOnMismatch) {
          return fail(
            "thinking_prefix_mismatch",
            `${ref.path}: Invalid \`signature\` in \`${block.type}\` block. The block is bound to a different conversation. ` +
              'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".',
          );
        }
        dropped.push({ ...ref, reason: "prefix_binding_mismatch" });
        droppingRun = true;
        continue;
      }
      verified.push(ref);
    }
  }
  return {
    ok: true,
    verified,
    dropped,
    inputTransformations: dropped.map((d) => ({ type: "thinking_dropped", path: d.path, reason: d.reason })),
  };
}

export interface BuiltAnthropicMessage {
  body: Record<string, any>;
  issued: IssuedAnthropicTurn;
}

/**
 * The Messages answer to `request` for `script`: with thinking on, a thinking (or
 * redacted_thinking) block signed over its text and the request's prefix, then text and tool_use
 * blocks. Response shape per "Building with extended thinking": thinking blocks first, then text.
 */
export function buildAnthropicMessage(
  request: any,
  script: AnthropicTurnScript,
  options: { signer: Signer; id: string; inputTransformations?: AnthropicInputTransformation[] },
): BuiltAnthropicMessage {
  const messages = asArray(request?.messages);
  const content: any[] = [];
  const thinkingRefs: AnthropicBlockRef[] = [];
  const path = (j: number) => `messages.${messages.length}.content.${j}`;
  if (anthropicThinkingOn(request) && script.thinking !== false) {
    // `display: "omitted"` returns the block with empty text and a signature all the same
    // (the SDK's `ThinkingConfigEnabled.display`); the signature covers the text as returned.
    const text = request.thinking.display === "omitted" ? "" : (script.thinking ?? `Emulated reasoning for ${options.id}.`);
    const ph = anthropicPrefixHash(request, messages.length, content);
    if (script.redacted) {
      const data = sealRedactedThinking(options.signer, text, ph);
      content.push({ type: "redacted_thinking", data });
      thinkingRefs.push({ path: path(0), type: "redacted_thinking", token: data });
    } else {
      const signature = signThinking(options.signer, text, ph);
      content.push({ type: "thinking", thinking: text, signature });
      thinkingRefs.push({ path: path(0), type: "thinking", token: signature });
    }
  }
  const toolUses = script.toolUses ?? [];
  if (script.text !== undefined || toolUses.length === 0) {
    // No `citations` member: the AI SDK's Anthropic provider reads a present one as an array.
    content.push({ type: "text", text: script.text ?? "ok" });
  }
  toolUses.forEach((t, n) => {
    content.push({ type: "tool_use", id: t.id ?? `toolu_${options.id}_${n}`, name: t.name, input: t.input ?? {} });
  });
  const outputChars = content.reduce((sum, b) => sum + JSON.stringify(b).length, 0);
  const body: Record<string, any> = {
    id: options.id,
    type: "message",
    role: "assistant",
    model: request?.model ?? "claude-emulated",
    content,
    stop_reason: toolUses.length > 0 ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: Math.ceil(JSON.stringify(request ?? {}).length / 4),
      output_tokens: Math.ceil(outputChars / 4),
    },
  };
  if (options.inputTransformations) body.input_transformations = options.inputTransformations;
  return {
    body,
    issued: { key: anthropicTurnKey(content), responseId: options.id, thinking: thinkingRefs },
  };
}
