/**
 * An MCP server over the service: `search_history`, `get_context` and `get_message` for any
 * process the API key's tenant owns. The `vancetope-memory-mcp` binary serves it over stdio.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MemoryApiError, type MemoryClient } from "./memory-client.js";
import { getMessage, getMessageTool, historySearchTool, searchHistory, SEARCH_LIMIT_MAX, toolError, type MemoryToolResult } from "./tools.js";

export interface MemoryMcpServerOptions {
  client: MemoryClient;
  /** Reported to MCP clients; defaults to the package's name and version. */
  name?: string;
  version?: string;
}

const processId = z.string().min(1).describe("The process (conversation) to read, as the engine named it.");
const search = historySearchTool.parameters.properties;

/**
 * @example
 * const server = createMemoryMcpServer({ client: createMemoryClient({ baseUrl, apiKey }) });
 * await server.connect(new StdioServerTransport());
 */
export function createMemoryMcpServer(options: MemoryMcpServerOptions): McpServer {
  const { client } = options;
  const server = new McpServer({ name: options.name ?? "vancetope-memory", version: options.version ?? "0.1.0" });

  server.registerTool(
    "search_history",
    {
      description: `${historySearchTool.description} Needs the processId.`,
      inputSchema: {
        processId,
        query: z.string().min(1).describe(search.query!.description),
        tag: z.string().min(1).optional().describe(search.tag!.description),
        limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional().describe(search.limit!.description),
      },
      annotations: { readOnlyHint: true },
    },
    ({ processId, ...args }) => asToolResult(() => searchHistory(client, processId, args)),
  );

  server.registerTool(
    "get_context",
    {
      description:
        "The memory block the service replays in the process's system prompt: the summary of earlier turns, the parent's " +
        "context, and with a query the archived messages it recalls.",
      inputSchema: {
        processId,
        query: z.string().min(1).optional().describe("Also recall archived messages matching these words."),
      },
      annotations: { readOnlyHint: true },
    },
    ({ processId, query }) =>
      asToolResult(async () => {
        const context = await client.getContext(processId, query ? { query } : {});
        return { block: context.block, sections: context.sections.map((s) => s.name) };
      }),
  );

  server.registerTool(
    "get_message",
    {
      description: `${getMessageTool.description} Needs the processId.`,
      inputSchema: { processId, messageId: z.string().min(1).describe(getMessageTool.parameters.properties.messageId!.description) },
      annotations: { readOnlyHint: true },
    },
    ({ processId, messageId }) => asToolResult(() => getMessage(client, processId, { messageId })),
  );

  return server;
}

/** Every answer of the service, errors included, goes back to the MCP client as a tool result it can show. */
async function asToolResult(run: () => Promise<unknown>) {
  let result: MemoryToolResult;
  try {
    result = { content: JSON.stringify(await run()), isError: false };
  } catch (e) {
    if (!(e instanceof MemoryApiError)) throw e;
    result = toolError(`${e.code}: ${e.message}`);
  }
  return { content: [{ type: "text" as const, text: result.content }], isError: result.isError };
}
