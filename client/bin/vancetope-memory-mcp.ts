#!/usr/bin/env node
/**
 * `vancetope-memory-mcp`: the MCP server over stdio. Reads MEMORY_URL, MEMORY_API_KEY and
 * MEMORY_PROCESS_IDS (the process it may read, or a comma-separated allow-list) from the
 * environment; needs @modelcontextprotocol/sdk and zod installed next to this package.
 */
import { createMemoryClient } from "../memory-client.js";

const fail = (message: string): never => {
  process.stderr.write(`vancetope-memory-mcp: ${message}\n`);
  process.exit(1);
};

const baseUrl = process.env.MEMORY_URL?.trim() || fail("set MEMORY_URL to the service's URL, e.g. http://127.0.0.1:3000");
const apiKey = process.env.MEMORY_API_KEY?.trim() || fail("set MEMORY_API_KEY to an API key of the service");
const processIds = (process.env.MEMORY_PROCESS_IDS ?? "")
  .split(",")
  .map((id) => id.trim())
  .filter((id) => id !== "");
if (processIds.length === 0) fail("set MEMORY_PROCESS_IDS to the process the tools may read, or a comma-separated allow-list of processes");

// Loaded late so that a missing optional peer dependency gets a sentence instead of a stack trace.
const [{ createMemoryMcpServer }, { StdioServerTransport }] = await Promise.all([
  import("../mcp.js"),
  import("@modelcontextprotocol/sdk/server/stdio.js"),
]).catch((e: NodeJS.ErrnoException) =>
  e.code === "ERR_MODULE_NOT_FOUND"
    ? fail(`needs @modelcontextprotocol/sdk 1.x and zod: npm install @modelcontextprotocol/sdk zod (${e.message})`)
    : Promise.reject(e),
);

const server = createMemoryMcpServer({ client: createMemoryClient({ baseUrl, apiKey }), processIds });
await server.connect(new StdioServerTransport());
