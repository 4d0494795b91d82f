/**
 * Starts `vancetope-memory-mcp` over stdio the way an MCP client does, bound to one process, lists
 * its tools and searches that process's history. Needs no model key.
 * Run: `npm start` in one terminal, then `npx tsx --tsconfig examples/tsconfig.json examples/mcp.ts <processId> <words>`
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";

const [processId = "demo-1", ...words] = process.argv.slice(2);
const env = {
  PATH: process.env.PATH ?? "",
  MEMORY_URL: process.env.MEMORY_URL ?? "http://127.0.0.1:3000",
  MEMORY_API_KEY: process.env.MEMORY_API_KEY ?? "local-dev-key",
  // The server reads this process only: the model cannot reach another one of the tenant.
  MEMORY_PROCESS_IDS: processId,
};
// An installed package runs `node_modules/.bin/vancetope-memory-mcp`; in this repository, the source.
const server = fileURLToPath(new URL("../client/bin/vancetope-memory-mcp.ts", import.meta.url));
const transport = new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", server], env });

const client = new Client({ name: "memory-example", version: "1.0.0" });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  console.log("tools:", tools.map((t) => t.name).join(", "));
  const result = await client.callTool({ name: "search_history", arguments: { query: words.join(" ") || "plan" } });
  console.log(JSON.stringify(result.content, null, 2));
} finally {
  await client.close();
}
