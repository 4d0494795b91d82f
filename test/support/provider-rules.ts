/**
 * The tool-call rules the providers enforce on a request (each broken rule is a 400 there), as
 * checks that name what is wrong: the property tests run them over the prompt helpers' output,
 * and the local wire server answers 400 with them the way the providers do.
 */

/** OpenAI Chat Completions: every `tool_calls` entry answered by one `tool` message right after. */
export function openAIRequestProblems(messages: readonly any[]): string[] {
  const problems: string[] = [];
  if (!Array.isArray(messages) || messages.length === 0) return ["messages must be a non-empty array"];
  let open: Set<string> | null = null; // call ids still waiting for their tool message
  messages.forEach((m, i) => {
    if (m.role === "tool") {
      if (open === null) problems.push(`messages[${i}]: a tool message must answer a preceding assistant message with tool_calls`);
      else if (!open.has(m.tool_call_id)) problems.push(`messages[${i}]: tool_call_id ${m.tool_call_id} answers no open tool call`);
      else open.delete(m.tool_call_id);
      if (typeof m.content !== "string") problems.push(`messages[${i}]: tool content must be a string`);
      return;
    }
    if (open !== null && open.size > 0) {
      problems.push(`messages[${i}]: tool_calls ${[...open].join(", ")} have no tool message before this ${m.role} message`);
    }
    open = null;
    if (!["system", "user", "assistant"].includes(m.role)) problems.push(`messages[${i}]: unknown role ${m.role}`);
    if (m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const ids = m.tool_calls.map((c: any) => c.id);
      if (new Set(ids).size !== ids.length) problems.push(`messages[${i}]: duplicate tool_call ids`);
      open = new Set(ids);
    } else if (m.role !== "assistant" || m.content !== null) {
      if (typeof m.content !== "string") problems.push(`messages[${i}]: content must be a string`);
    } else {
      problems.push(`messages[${i}]: assistant content may be null only with tool_calls`);
    }
  });
  if (open !== null && (open as Set<string>).size > 0) problems.push(`tool_calls ${[...(open as Set<string>)].join(", ")} are never answered`);
  return problems;
}

/**
 * Anthropic Messages: user first, roles alternating, no empty content or text; every `tool_use`
 * answered by a `tool_result` (listed before any text) in the very next user message, and every
 * `tool_result` answering a `tool_use` of the message right before it.
 */
export function anthropicRequestProblems(messages: readonly any[]): string[] {
  const problems: string[] = [];
  if (!Array.isArray(messages) || messages.length === 0) return ["messages must be a non-empty array"];
  if (messages[0].role !== "user") problems.push("messages[0]: the first message must be a user message");
  const uses = new Set<string>();
  messages.forEach((m, i) => {
    if (i > 0 && messages[i - 1].role === m.role) problems.push(`messages[${i}]: roles must alternate`);
    if (!Array.isArray(m.content) || m.content.length === 0) {
      problems.push(`messages[${i}]: content must be a non-empty array`);
      return;
    }
    for (const b of m.content) {
      if (b.type === "text" && (typeof b.text !== "string" || b.text.trim() === "")) problems.push(`messages[${i}]: text blocks must be non-empty`);
      if (b.type === "tool_use") {
        if (m.role !== "assistant") problems.push(`messages[${i}]: tool_use only in assistant messages`);
        if (uses.has(b.id)) problems.push(`messages[${i}]: tool_use ids must be unique (${b.id})`);
        uses.add(b.id);
        if (typeof b.input !== "object" || b.input === null || Array.isArray(b.input)) problems.push(`messages[${i}]: tool_use.input must be an object`);
      }
    }
    const results = m.content.filter((b: any) => b.type === "tool_result");
    if (results.length > 0) {
      if (m.role !== "user") problems.push(`messages[${i}]: tool_result only in user messages`);
      const firstOther = m.content.findIndex((b: any) => b.type !== "tool_result");
      if (firstOther >= 0 && firstOther < results.length) problems.push(`messages[${i}]: tool_result blocks must come first`);
      const prev = messages[i - 1];
      const prevUses = new Set<string>((prev?.role === "assistant" ? prev.content : []).filter((b: any) => b.type === "tool_use").map((b: any) => b.id));
      for (const r of results) {
        if (!prevUses.has(r.tool_use_id)) problems.push(`messages[${i}]: tool_result ${r.tool_use_id} has no tool_use in the previous message`);
      }
    }
    if (m.role === "assistant") {
      const ids = m.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id);
      if (ids.length === 0) return;
      const next = messages[i + 1];
      const answered = (next?.role === "user" && Array.isArray(next.content) ? next.content : []).filter((b: any) => b.type === "tool_result").map((b: any) => b.tool_use_id);
      for (const id of ids) {
        const n = answered.filter((a: string) => a === id).length;
        if (n !== 1) problems.push(`messages[${i}]: tool_use ${id} is answered ${n} times in the next message`);
      }
    }
  });
  return problems;
}
