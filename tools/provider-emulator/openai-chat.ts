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
