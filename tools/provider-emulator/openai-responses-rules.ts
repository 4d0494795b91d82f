/**
 * OpenAI Responses rules on reasoning items, as pure functions: the emulator's `encrypted_content`
 * (sealed, bound to the item's prefix), its verification, and the dropping of reasoning items that
 * follow a prefix change.
 */
import { canonicalHash, canonicalJson, sha256Hex } from "./canonical-json.js";
import type { Signer } from "./signing.js";

/** What the scripted model "says" in one Responses answer. */
export interface OpenAIResponsesTurnScript {
  /** Reasoning summary text (default: a generated sentence); `false` answers without reasoning. */
  reasoning?: string | false;
  text?: string;
  functionCalls?: Array<{ callId?: string; name: string; arguments?: string | Record<string, unknown> }>;
}

export interface OpenAIInputTransformation {
  type: "reasoning";
  /** The original reasoning item id. */
  id: string;
  action: "removed";
  reason: "prefix_mismatch";
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export type OpenAIResponsesRule = "invalid_encrypted_content" | "reasoning_item_not_found";

export type OpenAIResponsesCheck =
  | { ok: true; kept: string[]; dropped: string[]; inputTransformations: OpenAIInputTransformation[] }
  | { ok: false; status: 400 | 404; rule: OpenAIResponsesRule; message: string; body: OpenAIErrorBody };

export interface OpenAIResponsesCheckOptions {
  signer: Signer;
  /** Prefix hashes of reasoning items the emulator stored (`store` not false), by id. */
  stored: ReadonlyMap<string, string>;
  /** Newer frontier models drop reasoning after a prefix change (default true). */
  preservedReasoning?: boolean;
  /** Whether request-level `instructions` are part of the prefix (default true; see `openAIPrefixHash`). */
  instructionsInPrefix?: boolean;
}

const asArray = (v: unknown): any[] => (Array.isArray(v) ? v : []);

/** The request's `input` as a list of items (a string is one user message). */
export function inputItems(body: any): any[] {
  if (typeof body?.input === "string") {
    return [{ type: "message", role: "user", content: [{ type: "input_text", text: body.input }] }];
  }
  return asArray(body?.input);
}

function dropNoise(value: any): any {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || k === "id" || k === "status") continue;
    out[k] = v;
  }
  return out;
}

/**
 * An item as the model sees it, so that the same history re-serialised by another client (ids,
 * statuses, empty annotations, string vs part content) is the same prefix.
 */
export function normalizeResponsesItem(item: any): unknown {
  const type = item?.type ?? (item?.role ? "message" : undefined);
  switch (type) {
    case "message": {
      const parts =
        typeof item.content === "string"
          ? [{ text: item.content }]
          : asArray(item.content).map((p: any) =>
              ["input_text", "output_text", "text"].includes(p?.type) ? { text: p.text } : dropNoise(p),
            );
      return { type: "message", role: item.role, parts };
    }
    case "function_call":
      return { type, call_id: item.call_id, name: item.name, arguments: item.arguments };
    case "function_call_output":
      return { type, call_id: item.call_id, output: item.output };
    case "reasoning":
      return { type, ref: item.id ?? canonicalHash(item.encrypted_content ?? null) };
    default:
      return dropNoise(item);
  }
}

/**
 * The hash of the prefix of the item at `index`: request-level `tools`, `text.format` and
 * (optionally) `instructions`, and every item before it (`index` may run past the input into
 * the answer being built, whose earlier items are `head`).
 *
 * Rule source: "Keep the prefix unchanged"
 * (https://developers.openai.com/api/docs/guides/keep-prefix-unchanged): "A reasoning item's
 * prefix is the conversation history that comes before it"; changing request-level `tools` or
 * `text.format`, or editing earlier input items, changes it; `instructions` do for models before
 * GPT-6.2 (from GPT-6.2 they are appended after the input), hence the option.
 */
export function openAIPrefixHash(
  body: any,
  index: number,
  head: readonly unknown[] = [],
  instructionsInPrefix = true,
): string {
  return openAIPrefixHasher(body, instructionsInPrefix)(index, head);
}

/**
 * The prefix hashes of one request as it stands: the request-level prefix and the items hashed as
 * a chain, so a long input is hashed once per request, not once per reasoning item. Use it for one
 * request body at a time: it does not see later edits of that body.
 */
export function openAIPrefixHasher(body: any, instructionsInPrefix = true): (index: number, head?: readonly unknown[]) => string {
  const input = inputItems(body);
  const chain = [canonicalHash({ instructions: instructionsInPrefix ? (body?.instructions ?? null) : null, tools: asArray(body?.tools), format: body?.text?.format ?? null })];
  const link = (hash: string, item: unknown) => sha256Hex(`${hash}\n${canonicalJson(normalizeResponsesItem(item))}`);
  return (index, head = []) => {
    const upTo = Math.min(index, input.length);
    while (chain.length <= upTo) chain.push(link(chain[chain.length - 1]!, input[chain.length - 1]));
    // Past the input: the answer's own earlier items.
    return head.slice(0, Math.max(0, index - input.length)).reduce<string>(link, chain[upTo]!);
  };
}

/** A reasoning item's `encrypted_content`: its id and prefix hash, sealed. */
export function sealReasoning(signer: Signer, id: string, prefixHash: string, summary: string): string {
  return signer.seal(canonicalJson({ kind: "reasoning", id, ph: prefixHash, s: summary }));
}

/** The prefix hash sealed in `encrypted_content`, or null when it is not this signer's intact blob for `id`. */
export function openReasoning(signer: Signer, encrypted: string, id: string | undefined): string | null {
  const plain = signer.open(encrypted);
  if (plain === null) return null;
  try {
    const parsed = JSON.parse(plain);
    if (parsed?.kind !== "reasoning" || typeof parsed.ph !== "string") return null;
    if (id !== undefined && parsed.id !== id) return null;
    return parsed.ph;
  } catch {
    return null;
  }
}

export function openAIErrorBody(message: string, code: string | null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type: "invalid_request_error", param, code } };
}

const abbreviate = (blob: string) => (blob.length > 12 ? `${blob.slice(0, 4)}...${blob.slice(-4)}` : blob);

/**
 * Judges the reasoning items of a Responses request.
 *
 * - `encrypted_content` that is not intact → 400 `invalid_encrypted_content`. The wording is the
 *   API's as reported in openai/codex#8119 and kin ("The encrypted content gAAA...c90= could not
 *   be verified."). That `encrypted_content` is returned only with `include:
 *   ["reasoning.encrypted_content"]` is from the API reference (`ResponseReasoningItem`); that
 *   only the issuing backend can read it, and so that a changed blob is refused, could not be
 *   found on an OpenAI page ("Reasoning" did not come up in search) and follows the project's
 *   design for native content.
 * - A reasoning item with neither readable content nor a stored copy → 404, as the API answers
 *   for items not persisted (`store: false`).
 * - A reasoning item whose prefix changed is dropped, no error, and reported in
 *   `input_transformations` as `{ type: "reasoning", id, action: "removed", reason:
 *   "prefix_mismatch" }` ("Keep the prefix unchanged", section "Audit prefix changes"; the shape is
 *   the SDKs' `Response::InputTransformation`).
 */
export function checkOpenAIResponsesRequest(body: any, options: OpenAIResponsesCheckOptions): OpenAIResponsesCheck {
  const items = inputItems(body);
  const kept: string[] = [];
  const dropped: string[] = [];
  const preserved = options.preservedReasoning ?? true;
  const prefixOf = openAIPrefixHasher(body, options.instructionsInPrefix ?? true);
  for (let k = 0; k < items.length; k++) {
    const item = items[k];
    if (item?.type !== "reasoning") continue;
    const id: string | undefined = typeof item.id === "string" ? item.id : undefined;
    let issuedUnder: string | null;
    if (typeof item.encrypted_content === "string") {
      issuedUnder = openReasoning(options.signer, item.encrypted_content, id);
      if (issuedUnder === null) {
        const message = `The encrypted content ${abbreviate(item.encrypted_content)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`;
        return { ok: false, status: 400, rule: "invalid_encrypted_content", message, body: openAIErrorBody(message, "invalid_encrypted_content") };
      }
    } else {
      issuedUnder = id !== undefined ? (options.stored.get(id) ?? null) : null;
      if (issuedUnder === null) {
        const message = `Item with id '${id ?? ""}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
        return { ok: false, status: 404, rule: "reasoning_item_not_found", message, body: openAIErrorBody(message, null, "input") };
      }
    }
    const ref = id ?? `input.${k}`;
    if (preserved && issuedUnder !== prefixOf(k)) dropped.push(ref);
    else kept.push(ref);
  }
  return {
    ok: true,
    kept,
    dropped,
    inputTransformations: dropped.map((id) => ({ type: "reasoning", id, action: "removed", reason: "prefix_mismatch" })),
  };
}

export type ExpandedInput =
  | { ok: true; body: any }
  | { ok: false; status: 404; rule: "item_not_found"; message: string; body: OpenAIErrorBody };

/**
 * The request with every `item_reference` replaced by the stored item it names (clients such as
 * the AI SDK send references for items of stored responses), so the rules judge what the model
 * sees. An unknown reference is the API's 404.
 */
export function expandItemReferences(body: any, storedItems: ReadonlyMap<string, unknown>): ExpandedInput {
  if (!Array.isArray(body?.input) || !body.input.some((i: any) => i?.type === "item_reference")) return { ok: true, body };
  const input: unknown[] = [];
  for (const item of body.input) {
    if (item?.type !== "item_reference") {
      input.push(item);
      continue;
    }
    const stored = storedItems.get(item.id);
    if (stored === undefined) {
      const message = `Item with id '${item.id}' not found.`;
      return { ok: false, status: 404, rule: "item_not_found", message, body: openAIErrorBody(message, null, "input") };
    }
    input.push(stored);
  }
  return { ok: true, body: { ...body, input } };
}

/** True when the request asks for reasoning (`reasoning` set, effort not `none`). */
export function reasoningRequested(body: any): boolean {
  return body?.reasoning != null && body.reasoning.effort !== "none";
}

export interface BuiltResponse {
  body: Record<string, any>;
  /** Reasoning items issued: id and prefix hash. */
  reasoning: Array<{ id: string; prefixHash: string }>;
}

/**
 * The Responses answer to `request` for `script`: a `reasoning` item first when reasoning is
 * requested (with `encrypted_content` only when `include` asks for it), then `message` and
 * `function_call` items.
 */
export function buildOpenAIResponse(
  request: any,
  script: OpenAIResponsesTurnScript,
  options: { signer: Signer; id: string; inputTransformations: OpenAIInputTransformation[]; instructionsInPrefix?: boolean },
): BuiltResponse {
  const output: any[] = [];
  const reasoning: BuiltResponse["reasoning"] = [];
  const inputLength = inputItems(request).length;
  const suffix = options.id.replace(/^resp_/, "");
  if (reasoningRequested(request) && script.reasoning !== false) {
    const id = `rs_${suffix}`;
    const summaryText = script.reasoning ?? `Emulated reasoning for ${options.id}.`;
    const prefixHash = openAIPrefixHash(request, inputLength, output, options.instructionsInPrefix ?? true);
    const item: Record<string, unknown> = {
      type: "reasoning",
      id,
      summary: request.reasoning?.summary ? [{ type: "summary_text", text: summaryText }] : [],
    };
    if (asArray(request.include).includes("reasoning.encrypted_content")) {
      item.encrypted_content = sealReasoning(options.signer, id, prefixHash, summaryText);
    }
    output.push(item);
    reasoning.push({ id, prefixHash });
  }
  const calls = script.functionCalls ?? [];
  if (script.text !== undefined || calls.length === 0) {
    output.push({
      type: "message",
      id: `msg_${suffix}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: script.text ?? "ok", annotations: [], logprobs: [] }],
    });
  }
  calls.forEach((c, n) => {
    output.push({
      type: "function_call",
      id: `fc_${suffix}_${n}`,
      call_id: c.callId ?? `call_${suffix}_${n}`,
      name: c.name,
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}),
      status: "completed",
    });
  });
  const inputTokens = Math.ceil(JSON.stringify(request ?? {}).length / 4);
  const outputTokens = Math.ceil(JSON.stringify(output).length / 4);
  return {
    reasoning,
    body: {
      id: options.id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: request?.instructions ?? null,
      model: request?.model ?? "gpt-emulated",
      output,
      parallel_tool_calls: true,
      temperature: null,
      tool_choice: request?.tool_choice ?? "auto",
      tools: asArray(request?.tools),
      top_p: null,
      reasoning: request?.reasoning ?? null,
      store: request?.store ?? true,
      text: request?.text ?? { format: { type: "text" } },
      metadata: {},
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: reasoning.length > 0 ? 16 : 0 },
        total_tokens: inputTokens + outputTokens,
      },
      input_transformations: options.inputTransformations,
    },
  };
}
