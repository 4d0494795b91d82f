/**
 * Gemini `generateContent` rules on thought signatures, as pure functions: the signatures the
 * emulator attaches to the parts it returns, and the check that the current turn's function
 * calls come back with theirs.
 */
import { canonicalJson } from "./canonical-json.js";
import type { Signer } from "./signing.js";

/** What the scripted model "says" in one generateContent answer. */
export interface GeminiTurnScript {
  text?: string;
  /** `id`: the call's optional unique id (v1beta `FunctionCall.id`, answered by `FunctionResponse.id`); absent unless scripted. */
  functionCalls?: Array<{ id?: string; name: string; args?: Record<string, unknown> }>;
}

export interface GeminiErrorBody {
  error: { code: 400; message: string; status: "INVALID_ARGUMENT" };
}

export type GeminiRule = "thought_signature_missing" | "thought_signature_invalid" | "function_call_turn_order" | "function_response_turn_order" | "function_response_count";

export type GeminiCheck =
  | { ok: true; verified: string[] }
  | { ok: false; status: 400; rule: GeminiRule; message: string; body: GeminiErrorBody };

const asArray = (v: unknown): any[] => (Array.isArray(v) ? v : []);

/** The signature of a part: an HMAC over what the part says (its function call or text). */
export function signGeminiPart(signer: Signer, part: any): string {
  const subject = part?.functionCall !== undefined ? { functionCall: part.functionCall } : { text: part?.text ?? "" };
  return signer.mac(`gemini\n${canonicalJson(subject)}`);
}

export function geminiErrorBody(message: string): GeminiErrorBody {
  return { error: { code: 400, message, status: "INVALID_ARGUMENT" } };
}

/** A user content that carries standard content (text, files...), not only function responses. */
function startsTurn(content: any): boolean {
  if (content?.role !== "user") return false;
  return asArray(content.parts).some((p: any) => p?.functionResponse === undefined);
}

/**
 * Index of the first content of the current turn: the one after the latest user content with
 * standard content (so function responses continue a turn).
 */
export function geminiCurrentTurnStart(contents: readonly any[]): number {
  for (let i = contents.length - 1; i >= 0; i--) if (startsTurn(contents[i])) return i + 1;
  return 0;
}

const countParts = (content: any, key: "functionCall" | "functionResponse") => asArray(content?.parts).filter((p: any) => p?.[key] !== undefined).length;

/**
 * The order Gemini holds a history's function calls to, or the first break of it: a function call
 * turn right after a user turn (text or function responses), a function response turn right after
 * a function call turn, with as many responses as calls. Rule source: the API's 400
 * INVALID_ARGUMENT messages as quoted in users' reports (google-gemini/gemini-cli issues 11814,
 * "when the sent conversation history starts with a function call", and 17208;
 * langchain-ai/langchain issue 27799), not a Google page. A history cut inside a turn breaks the
 * first (it starts with a function call); a call parted from its response breaks the others.
 */
export function geminiTurnOrderBreak(contents: readonly any[]): { rule: GeminiRule; message: string } | undefined {
  for (let i = 0; i < contents.length; i++) {
    const calls = contents[i]?.role === "model" ? countParts(contents[i], "functionCall") : 0;
    const responses = contents[i]?.role === "user" ? countParts(contents[i], "functionResponse") : 0;
    const before = contents[i - 1];
    if (calls > 0 && before?.role !== "user") {
      return { rule: "function_call_turn_order", message: "Please ensure that function call turn comes immediately after a user turn or after a function response turn." };
    }
    if (responses === 0) continue;
    const answered = before?.role === "model" ? countParts(before, "functionCall") : 0;
    if (answered === 0) return { rule: "function_response_turn_order", message: "Please ensure that function response turn comes immediately after a function call turn." };
    if (answered !== responses) {
      return { rule: "function_response_count", message: "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn." };
    }
  }
  return undefined;
}

/**
 * Judges the order of a generateContent request's function calls ({@link geminiTurnOrderBreak}),
 * then its thought signatures.
 *
 * Rule source: "Thought Signatures" (https://ai.google.dev/gemini-api/docs/thought-signatures),
 * section "Signatures in function calling parts": only the current turn is validated (it starts
 * after the latest user message with standard content; function responses do not start one); the
 * first `functionCall` part of every step (model content) of the current turn must carry its
 * `thoughtSignature`, else 400. The missing-signature message is the API's own wording as seen in
 * users' reports. A signature that does not verify → 400 "Corrupted thought signature." — that
 * wording is from third-party reports, not from Google's page.
 */
export function checkGeminiRequest(body: any, options: { signer: Signer }): GeminiCheck {
  const contents = asArray(body?.contents);
  const order = geminiTurnOrderBreak(contents);
  if (order) return { ok: false, status: 400, ...order, body: geminiErrorBody(order.message) };
  const verified: string[] = [];
  for (let i = geminiCurrentTurnStart(contents); i < contents.length; i++) {
    const content = contents[i];
    if (content?.role !== "model") continue;
    const parts = asArray(content.parts);
    const j = parts.findIndex((p: any) => p?.functionCall !== undefined);
    if (j < 0) continue;
    const part = parts[j];
    if (typeof part.thoughtSignature !== "string" || part.thoughtSignature === "") {
      const message =
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, " +
        `and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${part.functionCall?.name}\` , position ${i}. ` +
        "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.";
      return { ok: false, status: 400, rule: "thought_signature_missing", message, body: geminiErrorBody(message) };
    }
    if (!options.signer.verifyMac(`gemini\n${canonicalJson({ functionCall: part.functionCall })}`, part.thoughtSignature)) {
      const message = "Corrupted thought signature.";
      return { ok: false, status: 400, rule: "thought_signature_invalid", message, body: geminiErrorBody(message) };
    }
    verified.push(`contents.${i}.parts.${j}`);
  }
  return { ok: true, verified };
}

/**
 * The generateContent answer for `script`: function call parts (the first one signed, as the
 * page says parallel calls are), or text with the signature on its last part.
 */
export function buildGeminiResponse(request: any, script: GeminiTurnScript, options: { signer: Signer; model: string }) {
  const calls = script.functionCalls ?? [];
  const parts: any[] = [];
  if (script.text !== undefined || calls.length === 0) parts.push({ text: script.text ?? "ok" });
  calls.forEach((c) => parts.push({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args ?? {} } }));
  const signed = calls.length > 0 ? parts.findIndex((p) => p.functionCall !== undefined) : parts.length - 1;
  parts[signed] = { ...parts[signed], thoughtSignature: signGeminiPart(options.signer, parts[signed]) };
  const prompt = Math.ceil(JSON.stringify(request ?? {}).length / 4);
  const candidates = Math.ceil(JSON.stringify(parts).length / 4);
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates },
    modelVersion: options.model,
  };
}
