/**
 * A finished Messages answer re-told as the Messages streaming events (SSE), for clients that
 * stream: `message_start`, one start/delta/stop triple per block, `message_delta`, `message_stop`.
 */

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The SSE body for `message` (a Messages API answer as `buildAnthropicMessage` makes it).
 * Event shapes per Anthropic's "Streaming Messages" and "Building with extended thinking"
 * (thinking arrives as `thinking_delta` then one `signature_delta`).
 */
export function anthropicSseBody(message: Record<string, any>): string {
  const { content, stop_reason, stop_sequence, usage, ...head } = message;
  let out = event("message_start", {
    type: "message_start",
    message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  (content as any[]).forEach((block, index) => {
    if (block.type === "thinking") {
      out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } });
      out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "text") {
      out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    } else if (block.type === "tool_use") {
      out += event("content_block_start", { type: "content_block_start", index, content_block: { ...block, input: {} } });
      out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    } else {
      out += event("content_block_start", { type: "content_block_start", index, content_block: block });
    }
    out += event("content_block_stop", { type: "content_block_stop", index });
  });
  out += event("message_delta", { type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { output_tokens: usage?.output_tokens ?? 0 } });
  out += event("message_stop", { type: "message_stop" });
  return out;
}
