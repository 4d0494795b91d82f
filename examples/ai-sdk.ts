/**
 * A chat loop on the Vercel AI SDK whose history lives in Vancetope Memory.
 * Run: `npm start` in one terminal, then
 * `OPENAI_API_KEY=… npx tsx --tsconfig examples/tsconfig.json examples/ai-sdk.ts "What did we decide about the migration?"`
 */
import { openai } from "@ai-sdk/openai";
import { generateText, wrapLanguageModel } from "ai";
import { createMemoryClient } from "@vancetope/memory-client";
import { memoryMiddleware } from "@vancetope/memory-client/ai-sdk";

const memory = createMemoryClient({
  baseUrl: process.env.MEMORY_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.MEMORY_API_KEY ?? "local-dev-key",
});
const processId = process.env.PROCESS_ID ?? "example-ai-sdk";
await memory.upsertProcess(processId, { projectId: "examples", engine: "ai-sdk" });

const model = wrapLanguageModel({
  model: openai.chat("gpt-4o-mini"),
  // gpt-4o-mini is in the service's model registry; other models need `contextWindow`.
  middleware: memoryMiddleware({ client: memory, processId }),
});

// Only the new message: the middleware replaces the history with the service's replay.
const { text } = await generateText({
  model,
  system: "You are a concise assistant.",
  prompt: process.argv[2] ?? "Hello! What do you remember about me?",
});
console.log(text);
