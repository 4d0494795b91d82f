/**
 * Gemini's `contents` and `systemInstruction` from a turn: stored `gemini` parts exactly, the rest
 * converted from their text. Plain types only.
 */
import { nativeOf, newestUserMessage, orphanToolResult, pairToolResults, splitBlock, toolInput, uniqueCalls, type PromptOptions, type TurnLike } from "./prompt-replay.js";

/** A Gemini `Part`: text, functionCall, functionResponse, or a stored part (thoughtSignature, inlineData, …) as it is. */
export interface GeminiPart {
  text?: string;
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  [field: string]: unknown;
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
}

/**
 * Gemini's `contents` and `systemInstruction`: the engine's prompt, the memory block (its dynamic
 * part too, unless `recall: "message"`) and the chat's SYSTEM messages as system parts; the
 * active messages as contents. A message stored with `gemini` content is its parts exactly
 * (`thoughtSignature` included, which Gemini 3 requires on the calls of the current turn); any
 * other is converted: text parts, `functionCall` parts, and for each model content with calls one
 * user content right after with a `functionResponse` per call (its result, or a placeholder). With
 * a turn asked with `format: "gemini"`, this is `turn.request` with the engine's prompt first.
 *
 * @example
 * const { contents, systemInstruction } = toGeminiContents(turn, { system: "You are Frankie." });
 * const reply = await ai.models.generateContent({ model: "gemini-3-pro", contents, config: { systemInstruction } });
 * await memory.appendMessage(processId, { native: { format: "gemini", content: reply.candidates[0].content.parts } });
 */
export function toGeminiContents(turn: TurnLike, options: PromptOptions = {}): GeminiRequest {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const recallAsMessage = options.recall === "message" && dynamicBlock !== "";
  const system = [options.system ?? "", staticBlock, recallAsMessage ? "" : dynamicBlock].filter((t) => t.trim() !== "");
  const contents: GeminiContent[] = [];
  const names = new Map<string, string>();
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  if (recallAsMessage && !beforeUser) contents.push({ role: "user", parts: [{ text: dynamicBlock }] });
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
    for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
    if (m === beforeUser) contents.push({ role: "user", parts: [{ text: dynamicBlock }] });
    const native = nativeOf(m, "gemini") as GeminiPart[] | undefined;
    if (native) contents.push({ role: m.role === "ASSISTANT" ? "model" : "user", parts: native });
    else {
      switch (m.role) {
        case "SYSTEM":
          if (m.content.trim() !== "") system.push(m.content);
          break;
        case "USER":
          contents.push({ role: "user", parts: [{ text: m.content }] });
          break;
        case "ASSISTANT":
          contents.push({
            role: "model",
            parts: [
              ...(m.content !== "" ? [{ text: m.content }] : []),
              ...uniqueCalls(m).map((c) => ({ functionCall: { id: c.id, name: c.name, args: toolInput(c.arguments) } })),
            ],
          });
          break;
        case "TOOL":
          contents.push({ role: "user", parts: [{ text: orphanToolResult(m) }] });
          break;
      }
    }
    // All responses to one model content go in the one user content after it.
    const parts: GeminiPart[] = [];
    for (const a of answers ?? []) {
      const whole = a.message && nativeOf(a.message, "gemini");
      if (whole) {
        if (a.first && !a.inPlace) parts.push(...(whole as GeminiPart[]));
      } else parts.push({ functionResponse: { id: a.toolCallId, name: names.get(a.toolCallId) ?? "unknown", response: { result: a.content } } });
    }
    if (parts.length > 0) contents.push({ role: "user", parts });
  }
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: system.map((text) => ({ text })) } } : {}) };
}
