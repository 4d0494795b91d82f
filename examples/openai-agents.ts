/**
 * An OpenAI Agents SDK agent whose session lives in Vancetope Memory.
 * Run: `npm start` in one terminal, then
 * `OPENAI_API_KEY=… npx tsx --tsconfig examples/tsconfig.json examples/openai-agents.ts "Where is order 42?"`
 */
import { Agent, run, tool } from "@openai/agents";
import { z } from "zod";
import { createMemoryClient } from "@vancetope/memory-client";
import { createMemorySession } from "@vancetope/memory-client/openai-agents";

const memory = createMemoryClient({
  baseUrl: process.env.MEMORY_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.MEMORY_API_KEY ?? "local-dev-key",
});
const processId = process.env.PROCESS_ID ?? "example-agents";
await memory.upsertProcess(processId, { projectId: "examples", engine: "openai-agents" });

const lookupOrder = tool({
  name: "lookup_order",
  description: "Find an order by id",
  parameters: z.object({ id: z.string() }),
  execute: async ({ id }) => `order ${id}: shipped yesterday from Porto`,
});
const agent = new Agent({ name: "Desk", instructions: "You answer order questions.", model: "gpt-4o-mini", tools: [lookupOrder] });

// One session object per conversation; each run reads the compacted history and appends its items.
const session = createMemorySession({ client: memory, processId, model: { name: "gpt-4o-mini" } });
const result = await run(agent, process.argv[2] ?? "Where is order 42?", { session });
console.log(result.finalOutput);
