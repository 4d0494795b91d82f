/**
 * An MCP server over the service: `search_history`, `get_context` and `get_message` for the
 * processes it is bound to when it starts (one, or an allow-list). The model calling the tools
 * never reaches another process of the tenant, even one whose id it guesses. The
 * `vancetope-memory-mcp` binary serves it over stdio.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MemoryApiError, type MemoryClient } from "./memory-client.js";
import { getMessage, getMessageTool, historySearchTool, searchHistory, SEARCH_LIMIT_MAX, toolError, type MemoryToolResult } from "./tools.js";

export interface MemoryMcpServerOptions {
  client: MemoryClient;
  /**
   * The processes the tools may read, fixed when the server starts. With one, `processId` is
   * optional and defaults to it; with several, each call names one of them. A call naming any
   * other process is refused (`process.not_allowed`) without a request to the service.
   */
  processIds: readonly string[];
  /** Reported to MCP clients; defaults to the package's name and version. */
  name?: string;
  version?: string;
}

/** Refused before any request: the tool named a process the server is not bound to. */
class NotAllowed extends Error {}

const search = historySearchTool.parameters.properties;

/**
 * @example
 * const server = createMemoryMcpServer({ client: createMemoryClient({ baseUrl, apiKey }), processIds: ["frankie-42"] });
 * await server.connect(new StdioServerTransport());
 */
export function createMemoryMcpServer(options: MemoryMcpServerOptions): McpServer {
  const { client } = options;
  const allowed = [...new Set(options.processIds)];
  if (allowed.length === 0) throw new Error("createMemoryMcpServer: processIds must name at least one process the tools may read");
  const only = allowed.length === 1 ? allowed[0]! : undefined;
  const listed = allowed.join(", ");

  const processId = only
    ? z.string().min(1).optional().describe(`The process (conversation) to read. This server reads only ${only}, the default.`)
    : z.string().min(1).describe(`The process (conversation) to read, one of: ${listed}.`);

  /** The process a call reads: the one it names, if the server is bound to it, or the only one. */
  const bound = (asked: string | undefined): string => {
    const id = asked ?? only;
    if (id !== undefined && allowed.includes(id)) return id;
    throw new NotAllowed(
      `process.not_allowed: this server reads only ${only ? `the process ${only}` : `the processes ${listed}`}; not '${asked ?? ""}'`,
    );
  };

  const server = new McpServer({ name: options.name ?? "vancetope-memory", version: options.version ?? "0.1.0" });

  server.registerTool(
    "search_history",
    {
      description: `${historySearchTool.description} ${only ? "" : "Needs the processId."}`.trim(),
      inputSchema: {
        processId,
        query: z.string().min(1).describe(search.query!.description),
        tag: z.string().min(1).optional().describe(search.tag!.description),
        limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional().describe(search.limit!.description),
      },
      annotations: { readOnlyHint: true },
    },
    ({ processId, ...args }) => asToolResult(() => searchHistory(client, bound(processId), args)),
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
        const context = await client.getContext(bound(processId), query ? { query } : {});
        return { block: context.block, sections: context.sections.map((s) => s.name) };
      }),
  );

  server.registerTool(
    "get_message",
    {
      description: `${getMessageTool.description} ${only ? "" : "Needs the processId."}`.trim(),
      inputSchema: { processId, messageId: z.string().min(1).describe(getMessageTool.parameters.properties.messageId!.description) },
      annotations: { readOnlyHint: true },
    },
    ({ processId, messageId }) => asToolResult(() => getMessage(client, bound(processId), { messageId })),
  );

  return server;
}

/** Every answer of the service, errors included, goes back to the MCP client as a tool result it can show. */
async function asToolResult(run: () => Promise<unknown>) {
  let result: MemoryToolResult;
  try {
    result = { content: JSON.stringify(await run()), isError: false };
  } catch (e) {
    if (e instanceof NotAllowed) result = toolError(e.message);
    else if (e instanceof MemoryApiError) result = toolError(`${e.code}: ${e.message}`);
    else throw e;
  }
  return { content: [{ type: "text" as const, text: result.content }], isError: result.isError };
}
