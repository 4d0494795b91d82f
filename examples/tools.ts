/**
 * An OpenAI Chat Completions loop that lets the model search what the summary dropped.
 * Run: `npm start` in one terminal, then
 * `OPENAI_API_KEY=… npx tsx --tsconfig examples/tsconfig.json examples/tools.ts "What was the staging password policy?"`
 */
import OpenAI from "openai";
import { createMemoryClient, toOpenAIMessages } from "@vancetope/memory-client";
import { createMemoryToolHandler, memoryTools } from "@vancetope/memory-client/tools";

const memory = createMemoryClient({
  baseUrl: process.env.MEMORY_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.MEMORY_API_KEY ?? "local-dev-key",
});
const processId = process.env.PROCESS_ID ?? "example-tools";
await memory.upsertProcess(processId, { projectId: "examples" });
const openai = new OpenAI();
const runTool = createMemoryToolHandler({ client: memory, processId });

const turn = await memory.beginTurn(processId, {
  message: { role: "USER", content: process.argv[2] ?? "What did we decide earlier?" },
  model: { name: "gpt-4o-mini" },
});
const messages: OpenAI.Chat.ChatCompletionMessageParam[] = toOpenAIMessages(turn, {
  system: "Earlier turns are summarized; use search_history and get_message for details the summary lacks.",
});
// Anthropic: tools: memoryTools.map((t) => t.anthropic), and runTool(block.name, block.input) for each tool_use block.
const tools = memoryTools.map((t) => t.openai);

for (let step = 0; step < 5; step++) {
  const reply = (await openai.chat.completions.create({ model: "gpt-4o-mini", messages, tools })).choices[0]!.message;
  messages.push(reply);
  if (!reply.tool_calls?.length) {
    await memory.appendMessage(processId, { role: "ASSISTANT", content: reply.content ?? "" });
    console.log(reply.content);
    break;
  }
  // The memory tools' calls are reads of the past: they are not stored as part of the conversation.
  for (const call of reply.tool_calls) {
    if (call.type !== "function") continue;
    const { content } = await runTool(call.function.name, call.function.arguments);
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }
}
