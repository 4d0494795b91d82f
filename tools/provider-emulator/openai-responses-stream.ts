/**
 * A finished Responses answer re-told as the Responses streaming events (SSE), for clients that
 * stream (the AI SDK's `streamText`, the openai SDK's `responses.stream`).
 */

/**
 * The SSE body for `response` (a Responses answer as `buildOpenAIResponse` makes it): created,
 * in_progress, per item added / deltas / done, then completed with the whole response. A
 * reasoning item's `encrypted_content` comes only with its `output_item.done`, as OpenAI warns
 * the one in `output_item.added` may be incomplete (API reference, `ResponseReasoningItem`).
 */
export function openAIResponsesSseBody(response: Record<string, any>): string {
  let sequence = 0;
  let out = "";
  const emit = (data: Record<string, unknown>) => {
    out += `event: ${data.type}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`;
  };
  const pending = { ...response, status: "in_progress", output: [], usage: null };
  emit({ type: "response.created", response: pending });
  emit({ type: "response.in_progress", response: pending });
  (response.output as any[]).forEach((item, output_index) => {
    if (item.type === "reasoning") {
      const { encrypted_content: _later, ...head } = item;
      emit({ type: "response.output_item.added", output_index, item: { ...head, summary: [] } });
      (item.summary as any[]).forEach((part, summary_index) => {
        const base = { item_id: item.id, output_index, summary_index };
        emit({ type: "response.reasoning_summary_part.added", ...base, part: { type: "summary_text", text: "" } });
        emit({ type: "response.reasoning_summary_text.delta", ...base, delta: part.text });
        emit({ type: "response.reasoning_summary_text.done", ...base, text: part.text });
        emit({ type: "response.reasoning_summary_part.done", ...base, part });
      });
    } else if (item.type === "message") {
      emit({ type: "response.output_item.added", output_index, item: { ...item, status: "in_progress", content: [] } });
      (item.content as any[]).forEach((part, content_index) => {
        const base = { item_id: item.id, output_index, content_index };
        emit({ type: "response.content_part.added", ...base, part: { ...part, text: "" } });
        emit({ type: "response.output_text.delta", ...base, delta: part.text, logprobs: [] });
        emit({ type: "response.output_text.done", ...base, text: part.text, logprobs: [] });
        emit({ type: "response.content_part.done", ...base, part });
      });
    } else if (item.type === "function_call") {
      emit({ type: "response.output_item.added", output_index, item: { ...item, arguments: "", status: "in_progress" } });
      emit({ type: "response.function_call_arguments.delta", item_id: item.id, output_index, delta: item.arguments });
      emit({ type: "response.function_call_arguments.done", item_id: item.id, output_index, arguments: item.arguments });
    } else {
      emit({ type: "response.output_item.added", output_index, item });
    }
    emit({ type: "response.output_item.done", output_index, item });
  });
  emit({ type: "response.completed", response });
  return out;
}
