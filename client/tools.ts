/**
 * Tools an agent's model can call to reach what a summary dropped: `search_history` over every
 * message of the process (archived ones included) and `get_message` for one message in full.
 * Definitions in the OpenAI function and Anthropic tool formats, and one handler that runs a call.
 * Plain objects only: no dependency on either SDK (their request types accept these shapes).
 */
import { MemoryApiError, type MemoryClient } from "./memory-client.js";
import type { Message } from "./types.js";

/** The subset of JSON Schema the tools use (a type, not an interface: the SDKs want an index signature). */
export type JsonSchemaObject = {
  type: "object";
  properties: Record<string, { type: "string" | "integer"; description: string; minLength?: number; minimum?: number; maximum?: number }>;
  required: string[];
  additionalProperties: false;
};

export interface MemoryTool<Name extends string = string> {
  name: Name;
  description: string;
  parameters: JsonSchemaObject;
  /** For OpenAI Chat Completions `tools`. */
  openai: { type: "function"; function: { name: Name; description: string; parameters: JsonSchemaObject } };
  /** For Anthropic Messages `tools`. */
  anthropic: { name: Name; description: string; input_schema: JsonSchemaObject };
}

function defineTool<Name extends string>(name: Name, description: string, parameters: JsonSchemaObject): MemoryTool<Name> {
  return {
    name,
    description,
    parameters,
    openai: { type: "function", function: { name, description, parameters } },
    anthropic: { name, description, input_schema: parameters },
  };
}

/** Most hits a search returns, and how much of each message it quotes. */
export const SEARCH_LIMIT_MAX = 20;
const SEARCH_LIMIT_DEFAULT = 5;
const EXCERPT_CHARS = 400;

export const historySearchTool = defineTool(
  "search_history",
  "Search this conversation's full history, including earlier turns that were folded into the summary. " +
    "Returns the best-matching messages with an excerpt; read one in full with get_message.",
  {
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, description: "Words to look for (names, numbers, decisions, file paths)." },
      tag: { type: "string", minLength: 1, description: "Only messages with this tag, e.g. MODE:plan, or a prefix ending in *." },
      limit: { type: "integer", minimum: 1, maximum: SEARCH_LIMIT_MAX, description: `How many hits (default ${SEARCH_LIMIT_DEFAULT}).` },
    },
    required: ["query"],
    additionalProperties: false,
  },
);

export const getMessageTool = defineTool(
  "get_message",
  "Read one message of this conversation in full by its id (as returned by search_history), even if it was folded into the summary.",
  {
    type: "object",
    properties: { messageId: { type: "string", minLength: 1, description: "The message id, e.g. msg_01J…" } },
    required: ["messageId"],
    additionalProperties: false,
  },
);

/** Both tools, for `tools: memoryTools.map((t) => t.openai)` or `.map((t) => t.anthropic)`. */
export const memoryTools = [historySearchTool, getMessageTool] as const;

/** What a tool call returns to the model: JSON text, and whether it is an error the model should see. */
export interface MemoryToolResult {
  content: string;
  isError: boolean;
}

export interface MemoryToolHandlerOptions {
  client: MemoryClient;
  /** The process whose history the model may read; the model never chooses it. */
  processId: string;
}

/**
 * Runs one call of `search_history` or `get_message`. `input` is the call's arguments as the model
 * produced them: a JSON string (OpenAI `function.arguments`) or an object (Anthropic `input`).
 * Bad arguments, an unknown tool and a message that does not exist come back as an error result
 * for the model; a failure of the service itself (auth, 5xx, no answer) is thrown as a
 * `MemoryApiError`, because the model cannot fix it.
 *
 * @example
 * const runTool = createMemoryToolHandler({ client: memory, processId });
 * for (const call of reply.tool_calls ?? []) {
 *   const { content } = await runTool(call.function.name, call.function.arguments);
 *   messages.push({ role: "tool", tool_call_id: call.id, content });
 * }
 */
export function createMemoryToolHandler(options: MemoryToolHandlerOptions) {
  return async function runMemoryTool(name: string, input: unknown): Promise<MemoryToolResult> {
    const tool = memoryTools.find((t) => t.name === name);
    if (!tool) return toolError(`unknown tool "${name}"; this handler runs ${memoryTools.map((t) => t.name).join(", ")}`);
    const args = parseToolArguments<SearchArgs & GetMessageArgs>(tool.parameters, input);
    if (typeof args === "string") return toolError(`${name}: ${args}`);
    return answerOrToolError(() =>
      tool.name === "search_history"
        ? searchHistory(options.client, options.processId, args)
        : getMessage(options.client, options.processId, args),
    );
  };
}

// ------------------------------------------------------------------------ shared with the MCP server

export interface SearchArgs {
  query: string;
  tag?: string;
  limit?: number;
}

export interface GetMessageArgs {
  messageId: string;
}

/** One hit as the model sees it: enough to judge relevance, the id to read it in full. */
export async function searchHistory(client: MemoryClient, processId: string, args: SearchArgs): Promise<unknown> {
  const { items } = await client.searchHistory(processId, {
    q: args.query,
    limit: args.limit ?? SEARCH_LIMIT_DEFAULT,
    ...(args.tag ? { tag: args.tag } : {}),
  });
  return {
    results: items.map(({ message, score }) => ({
      messageId: message.id,
      role: message.role,
      createdAt: message.createdAt,
      archived: message.archivedInMemoryId !== null,
      score: Math.round(score * 100) / 100,
      excerpt: message.content.length > EXCERPT_CHARS ? `${message.content.slice(0, EXCERPT_CHARS)}…` : message.content,
    })),
  };
}

export async function getMessage(client: MemoryClient, processId: string, args: GetMessageArgs): Promise<unknown> {
  return describeMessage(await client.getMessage(processId, args.messageId));
}

function describeMessage(m: Message) {
  return {
    messageId: m.id,
    role: m.role,
    createdAt: m.createdAt,
    archived: m.archivedInMemoryId !== null,
    tags: m.tags,
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    ...(m.toolCalls?.length ? { toolCalls: m.toolCalls } : {}),
    content: m.content,
  };
}

export const toolError = (message: string): MemoryToolResult => ({ content: JSON.stringify({ error: message }), isError: true });

/**
 * The service's answer as JSON text; a 400 or 404 (the model asked for something wrong) becomes
 * an error result naming the problem, anything else is rethrown.
 */
export async function answerOrToolError(run: () => Promise<unknown>): Promise<MemoryToolResult> {
  try {
    return { content: JSON.stringify(await run()), isError: false };
  } catch (e) {
    if (e instanceof MemoryApiError && (e.status === 400 || e.status === 404)) return toolError(`${e.code}: ${e.message}`);
    throw e;
  }
}

/**
 * Checks arguments against a tool's schema. Returns the arguments, or a sentence naming what is
 * wrong (models do send strings for numbers, extra fields and broken JSON).
 */
export function parseToolArguments<T = Record<string, unknown>>(schema: JsonSchemaObject, input: unknown): T | string {
  let value = input;
  if (typeof input === "string") {
    try {
      value = input.trim() === "" ? {} : JSON.parse(input);
    } catch {
      return "the arguments are not valid JSON";
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "the arguments must be a JSON object";
  const args = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(args)) if (!(key in schema.properties)) problems.push(`unknown field "${key}"`);
  for (const key of schema.required) if (args[key] === undefined) problems.push(`"${key}" is required`);
  for (const [key, rule] of Object.entries(schema.properties)) {
    const v = args[key];
    if (v === undefined) continue;
    if (rule.type === "string") {
      if (typeof v !== "string") problems.push(`"${key}" must be a string`);
      else if (rule.minLength !== undefined && v.trim().length < rule.minLength) problems.push(`"${key}" must not be empty`);
    } else if (typeof v !== "number" || !Number.isInteger(v)) {
      problems.push(`"${key}" must be an integer`);
    } else if ((rule.minimum !== undefined && v < rule.minimum) || (rule.maximum !== undefined && v > rule.maximum)) {
      problems.push(`"${key}" must be between ${rule.minimum} and ${rule.maximum}`);
    }
  }
  return problems.length ? problems.join("; ") : (args as T);
}
