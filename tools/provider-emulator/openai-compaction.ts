/**
 * OpenAI's `/responses/compact`, as pure functions: the compacted window the emulator returns
 * (every user message of the input, then one `compaction` item whose `encrypted_content` only this
 * emulator can read), and the input a later request means when it carries that window as
 * returned (the compacted items put back in its place), so that reasoning after it keeps its
 * prefix, as the provider says compaction keeps later reasoning valid; and the Chat Completions
 * answer the service's summarizer gets when it writes the readable summary beside that window.
 *
 * Rule sources (docs/integrations.md, "The provider emulator"): the "Compaction" guide
 * (developers.openai.com/api/docs/guides/compaction), the "Compact a response" reference, and the
 * SDK's `CompactedResponse`, `ResponseCompactionItem` and `ResponseCompactParams`.
 */
import { canonicalHash, canonicalJson } from "./canonical-json.js";
import { inputItems, normalizeResponsesItem, openAIErrorBody, type OpenAIErrorBody } from "./openai-responses-rules.js";
import type { Signer } from "./signing.js";

/** What the emulator remembers of a window it returned: the items it stands for, and the window itself. */
export interface StoredWindow {
  items: any[];
  /** Hash of the window's items before the compaction item, as returned. */
  head: string;
}

export interface OpenAICompactionFailure {
  ok: false;
  status: 400;
  rule: "invalid_encrypted_content" | "compaction_invalid_request";
  message: string;
  body: OpenAIErrorBody;
}

const isUserMessage = (item: any) => (item?.type === "message" || (item?.type === undefined && item?.role)) && item.role === "user";
const windowHead = (items: readonly any[]) => canonicalHash(items.map(normalizeResponsesItem));

export type ExpandedResponses = { ok: true; body: any; compactions: number } | OpenAICompactionFailure;

/**
 * The request with the last compaction window it carries expanded: the window's items before
 * its compaction item, if they are the window as returned, and the compaction item are replaced
 * by the items that were compacted. A compaction item whose `encrypted_content` this emulator
 * cannot open is 400 `invalid_encrypted_content`, the code the API gives encrypted content it
 * cannot read. A window sent altered is not expanded: its reasoning then meets a changed prefix.
 */
export function expandCompactionWindow(body: any, signer: Signer, store: ReadonlyMap<string, StoredWindow>): ExpandedResponses {
  const items = inputItems(body);
  let at = -1;
  let stored: StoredWindow | undefined;
  let compactions = 0;
  for (let k = 0; k < items.length; k++) {
    const item = items[k];
    if (item?.type !== "compaction") continue;
    compactions++;
    const ref = openWindow(signer, item.encrypted_content);
    const found = ref === null ? undefined : store.get(ref);
    if (!found) {
      const blob = String(item.encrypted_content ?? "");
      const message = `The encrypted content ${blob.length > 12 ? `${blob.slice(0, 4)}...${blob.slice(-4)}` : blob} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`;
      return { ok: false, status: 400, rule: "invalid_encrypted_content", message, body: openAIErrorBody(message, "invalid_encrypted_content") };
    }
    at = k;
    stored = found;
  }
  if (!stored) return { ok: true, body, compactions };
  const userCount = stored.items.filter(isUserMessage).length;
  const start = at - userCount;
  if (start < 0 || windowHead(items.slice(start, at)) !== stored.head) return { ok: true, body, compactions };
  return { ok: true, body: { ...body, input: [...items.slice(0, start), ...stored.items, ...items.slice(at + 1)] }, compactions };
}

function openWindow(signer: Signer, blob: unknown): string | null {
  if (typeof blob !== "string") return null;
  const plain = signer.open(blob);
  if (plain === null) return null;
  try {
    const parsed = JSON.parse(plain);
    return parsed?.kind === "compaction" && typeof parsed.ref === "string" ? parsed.ref : null;
  } catch {
    return null;
  }
}

/**
 * The answer of `POST /v1/responses/compact` for an (expanded) request: `object:
 * "response.compaction"`, `output` every user message of the input followed by one `compaction`
 * item, and the usage of the pass.
 */
export function buildCompactedResponse(
  request: any,
  expanded: any,
  options: { signer: Signer; id: string; store: Map<string, StoredWindow> },
): Record<string, any> | OpenAICompactionFailure {
  if (typeof request?.model !== "string" || request.model === "") {
    const message = "Missing required parameter: 'model'.";
    return { ok: false, status: 400, rule: "compaction_invalid_request", message, body: openAIErrorBody(message, "missing_required_parameter", "model") };
  }
  const all = inputItems(expanded);
  // The user messages as output items (string content as one `input_text` part).
  const window = inputItems(request)
    .filter(isUserMessage)
    .map((m) => ({ type: "message", role: "user", content: typeof m.content === "string" ? [{ type: "input_text", text: m.content }] : m.content }));
  const ref = canonicalHash({ instructions: expanded.instructions ?? null, items: all.map(normalizeResponsesItem) });
  options.store.set(ref, { items: all, head: windowHead(window) });
  const suffix = options.id.replace(/^resp_/, "");
  const compaction = { type: "compaction", id: `cmp_${suffix}`, encrypted_content: options.signer.seal(canonicalJson({ kind: "compaction", ref })) };
  const inputTokens = Math.ceil(JSON.stringify(all).length / 4);
  const outputTokens = Math.ceil(compaction.encrypted_content.length / 4);
  return {
    id: options.id,
    object: "response.compaction",
    created_at: Math.floor(Date.now() / 1000),
    output: [...window, compaction],
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
}

/**
 * A Chat Completions answer, for the summarizers that speak it (the service's OpenAI summarizer
 * writes the readable summary of an `openai-compaction` fold over it). No reasoning rules: Chat
 * Completions keeps none. The default text is a `<summary>` block of the last user message's
 * lines, each cut to 200 characters, so a summarizer's prompt gets an answer it can read.
 */
export function buildChatCompletion(request: any, id: string, scripted?: string): Record<string, unknown> {
  const messages: any[] = Array.isArray(request?.messages) ? request.messages : [];
  const last = [...messages].reverse().find((m) => m?.role === "user");
  const text = typeof last?.content === "string" ? last.content : (Array.isArray(last?.content) ? last.content.map((p: any) => p?.text ?? "").join("\n") : "");
  const lines = text.split("\n").filter((l: string) => l.trim() !== "").map((l: string) => l.slice(0, 200));
  const content = scripted ?? `<summary>\n${lines.join("\n")}\n</summary>`;
  const prompt = Math.ceil(JSON.stringify(messages).length / 4);
  const completion = Math.ceil(content.length / 4);
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: request?.model ?? "gpt-emulated",
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}
