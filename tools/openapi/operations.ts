/**
 * Every route of the HTTP contract (docs/api.md) as data for the OpenAPI document: the zod schemas
 * its handler parses the request with (core/adapters/http/schemas.ts), the schemas of its answers
 * (core/adapters/http/responses.ts) and the error statuses it may answer. A test checks this list
 * against the routes the app really serves.
 */
import * as z from "../../core/domain/zod.js";
import * as req from "../../core/adapters/http/schemas.js";
import * as res from "../../core/adapters/http/responses.js";
import { TunablesOverride } from "../../core/domain/tunables.js";
import type { ErrorStatus } from "../../core/adapters/http/responses.js";

/** The document's groups of operations, in the reference's order. */
export const TAGS = {
  processes: "Processes: create, read, list, delete, export and import.",
  messages: "A process's messages.",
  compaction: "Turns, compaction and the memory block.",
  memories: "Summaries, their sources, history search and undo.",
  settings: "Compaction tunables of the tenant or a project.",
  inbox: "Offers to fold a finished topic.",
  service: "Liveness and this document.",
  local: "Routes of the local runner only (`npm start`).",
} as const;

/** A schema and the component name it gets in the document. */
export type Named = readonly [name: string, schema: z.ZodMiniType];

export interface Answer {
  description: string;
  body?: Named;
  /** The body's media type when it is not application/json. */
  mediaType?: string;
  /** A body that is not JSON (NDJSON, the document itself): its media type and a plain schema. */
  raw?: { mediaType: string; schema: Record<string, unknown> };
  headers?: Record<string, { description: string; required?: boolean }>;
}

export interface Operation {
  method: "get" | "put" | "post" | "patch" | "delete";
  path: string;
  operationId: string;
  summary: string;
  /** What a caller must know beyond the schemas; the behaviour itself is docs/api.md's. */
  description?: string;
  tag: keyof typeof TAGS;
  /** No API key: the route answers anyone. */
  public?: true;
  query?: z.ZodMiniObject;
  body?: Named;
  bodyMediaType?: string;
  rawBody?: { mediaType: string; description: string; schema?: Record<string, unknown> };
  /** Header parameters besides Authorization. */
  headers?: Record<string, { description: string; enum: string[] }>;
  /** A request example (checked against the body schema by the linter). */
  example?: unknown;
  answers: Record<number, Answer>;
  errors: ErrorStatus[];
}

/** Errors of every authenticated route: its input, the key, the tenant's rate, and internals. */
const V1: ErrorStatus[] = [400, 401, 429, 500];
/** ... of a route on one process (or one of its items), which may not exist. */
const ON_PROCESS: ErrorStatus[] = [...V1, 404];
/** ... of a route that reads a body (413 past 400 KB). */
const WITH_BODY: ErrorStatus[] = [...ON_PROCESS, 413];

/** The local PutEvents endpoint speaks AWS JSON 1.1, with AWS's error shape (local/local-routes.ts). */
const AWS_JSON = "application/x-amz-json-1.1";
const AwsJsonError = z.object({ __type: z.string(), message: z.string() });
const PutEventsInput = z.object({
  Entries: z.array(
    z.object({
      Source: z.optional(z.string()),
      DetailType: z.optional(z.string()),
      /** The event's detail, a JSON object, as a string. */
      Detail: z.optional(z.string()),
      EventBusName: z.optional(z.string()),
    }),
  ).check(z.minLength(1), z.maxLength(10)),
});
const PutEventsAnswer = z.object({
  FailedEntryCount: z.int().check(z.nonnegative()),
  Entries: z.array(z.object({ EventId: z.optional(z.string()), ErrorCode: z.optional(z.string()), ErrorMessage: z.optional(z.string()) })),
});

/**
 * An export's text. OpenAPI 3.1 has no schema per line of NDJSON (3.2's `itemSchema`): JSON
 * Schema's `contentSchema` names the schema of each line, which checkers apply line by line.
 */
const NDJSON_EXPORT = {
  type: "string",
  description: "NDJSON: one ExportLine per line, each ending in a line feed.",
  contentMediaType: "application/x-ndjson",
  contentSchema: { $ref: "#/components/schemas/ExportLine" },
};

const json = (description: string, name: string, schema: z.ZodMiniType): Answer => ({ description, body: [name, schema] });
const MODEL = { provider: "openai", name: "gpt-4o", contextWindow: 128000 };

export const OPERATIONS: Operation[] = [
  {
    method: "get", path: "/health", operationId: "health", summary: "Liveness check", tag: "service", public: true,
    answers: { 200: json("The service answers.", "Health", res.HealthAnswer) }, errors: [],
  },
  {
    method: "get", path: "/openapi.json", operationId: "getOpenApiDocument", summary: "This document", tag: "service", public: true,
    answers: { 200: { description: "The OpenAPI document of the contract.", raw: { mediaType: "application/json", schema: { type: "object" } } } },
    errors: [],
  },
  {
    method: "put", path: "/v1/processes/{processId}", operationId: "upsertProcess", summary: "Create or update a process", tag: "processes",
    body: ["ProcessInput", req.PutProcessBody], example: { projectId: "proj-1", name: "planner", engine: "my-engine" },
    answers: { 200: json("The process as stored.", "ProcessAnswer", res.ProcessAnswer) }, errors: [...WITH_BODY, 409],
  },
  {
    method: "get", path: "/v1/processes/{processId}", operationId: "getProcess", summary: "Read a process", tag: "processes",
    answers: { 200: json("The process.", "ProcessAnswer", res.ProcessAnswer) }, errors: ON_PROCESS,
  },
  {
    method: "delete", path: "/v1/processes/{processId}", operationId: "deleteProcess", summary: "Erase a process and every item of it", tag: "processes",
    description: "A deleted id is never used again (a PUT of it is 409 process.deleted). docs/api.md, \"Deleting a process\".",
    answers: {
      204: { description: "Every item of the process is erased." },
      202: json("A large process is being erased in the background; repeat the DELETE to follow it.", "DeletingAnswer", res.DeletingAnswer),
    },
    errors: ON_PROCESS,
  },
  {
    method: "get", path: "/v1/processes", operationId: "listProcesses", summary: "List processes, newest first", tag: "processes",
    query: req.ListProcessesQuery, answers: { 200: json("One page of processes.", "ProcessPage", res.ProcessPage) }, errors: V1,
  },
  {
    method: "get", path: "/v1/processes/{processId}/export", operationId: "exportProcess", summary: "Export a process as NDJSON, page by page", tag: "processes",
    description: "Repeat with the Export-Next-Cursor header as `cursor` until a page comes without it; the pages, concatenated, are the export. docs/api.md, \"Export and import\".",
    query: req.ExportQuery,
    answers: {
      200: {
        description: "One page of the export: one JSON value per line (ExportLine), each ending in a line feed.",
        raw: { mediaType: "application/x-ndjson", schema: NDJSON_EXPORT },
        headers: { "Export-Next-Cursor": { description: "The cursor of the next page; absent on the last page." } },
      },
    },
    errors: ON_PROCESS,
  },
  {
    method: "post", path: "/v1/processes/{processId}/import", operationId: "importProcess", summary: "Import an export into a new process", tag: "processes",
    description: "The whole file is validated before anything is written; a fault names its line (`details.line`). docs/api.md, \"Export and import\".",
    query: req.ImportQuery, rawBody: { mediaType: "application/x-ndjson", description: "An export (NDJSON, an ExportLine per line), at most 400 KB and 1,000 messages and memories; a larger one through `npm run processes -- import`.", schema: NDJSON_EXPORT },
    answers: { 201: json("The process written, how many messages and memories, and whether the project's settings were restored (only where the project had none).", "ImportAnswer", res.ImportAnswer) },
    errors: [...WITH_BODY, 409],
  },
  {
    method: "post", path: "/v1/processes/{processId}/messages", operationId: "appendMessage", summary: "Append a message", tag: "messages",
    body: ["MessageInput", req.AppendMessageBody], example: { role: "USER", content: "Deploy the staging stack.", tags: ["STRENGTH:strong"], idempotencyKey: "turn-42" },
    answers: {
      201: json("The message as stored.", "MessageAnswer", res.MessageAnswer),
      200: json("The message stored earlier under the same idempotencyKey.", "MessageAnswer", res.MessageAnswer),
    },
    // 409 idempotency.key_reused: the key came earlier with another body.
    errors: [...WITH_BODY, 409],
  },
  {
    method: "get", path: "/v1/processes/{processId}/messages", operationId: "listMessages", summary: "List messages, oldest first", tag: "messages",
    query: req.ListMessagesQuery, answers: { 200: json("One page of messages.", "MessagePage", res.MessagePage) }, errors: ON_PROCESS,
  },
  {
    method: "get", path: "/v1/processes/{processId}/messages/{messageId}", operationId: "getMessage", summary: "Read one message in full", tag: "messages",
    answers: { 200: json("The message, active or archived.", "MessageAnswer", res.MessageAnswer) }, errors: ON_PROCESS,
  },
  {
    method: "patch", path: "/v1/processes/{processId}/messages/{messageId}", operationId: "setMessageStrength", summary: "Set or remove a message's strength", tag: "messages",
    body: ["StrengthInput", req.PatchMessageBody], example: { strength: "pinned" },
    answers: { 200: json("The message with its one STRENGTH tag.", "MessageAnswer", res.MessageAnswer) }, errors: [...WITH_BODY, 409],
  },
  {
    method: "post", path: "/v1/processes/{processId}/compaction", operationId: "compact", summary: "Compact now", tag: "compaction",
    description: "Answers 200 when the fold completes within the manual budget (20 s by default), else 202 while the worker finishes it.",
    body: ["CompactionInput", req.CompactionBody], example: { model: MODEL, prompt: { tokens: 90000 }, force: "HARD" },
    answers: {
      200: json("The fold completed within the manual budget.", "CompactionAnswer", res.CompactionAnswer),
      202: json("The fold is queued (reason compaction_queued); the worker finishes it.", "CompactionAnswer", res.CompactionAnswer),
    },
    errors: [...WITH_BODY, 409],
  },
  {
    method: "post", path: "/v1/processes/{processId}/compaction/range", operationId: "compactRange", summary: "Fold the messages of a time range", tag: "compaction",
    body: ["RangeInput", req.RangeCompactionBody], example: { from: "2026-05-01T10:00:00Z", to: "2026-05-01T11:00:00Z", topicLabel: "database migration" },
    answers: { 200: json("What was folded (or, with reason, why not).", "RangeAnswer", res.RangeAnswer) }, errors: [...WITH_BODY, 409],
  },
  {
    method: "get", path: "/v1/processes/{processId}/context", operationId: "getContext", summary: "The memory block a turn would replay", tag: "compaction",
    query: req.ContextQuery, answers: { 200: json("The block and its sections.", "Context", res.ContextAnswer) }, errors: ON_PROCESS,
  },
  {
    method: "post", path: "/v1/processes/{processId}/turns", operationId: "runTurn", summary: "One engine turn: append, compact when due, answer what to send", tag: "compaction",
    description: "Send `context.block` as the system prompt (cache breakpoint after `context.staticBlock`) and `messages` as the conversation. `model.contextWindow` may be omitted for models the service knows. docs/turns.md.",
    body: ["TurnInput", req.TurnBody], example: { message: { role: "USER", content: "Next step?" }, model: MODEL, prompt: { tokens: 91000 }, query: "staging deploy" },
    answers: { 200: json("What to send the model: the memory block and the active messages.", "TurnAnswer", res.TurnAnswer) },
    errors: [...WITH_BODY, 409],
  },
  {
    method: "get", path: "/v1/processes/{processId}/memories", operationId: "listMemories", summary: "List a process's memories, newest first", tag: "memories",
    query: req.MemoriesQuery, answers: { 200: json("The memories.", "MemoryList", res.MemoryList) }, errors: ON_PROCESS,
  },
  {
    method: "get", path: "/v1/processes/{processId}/memories/{memoryId}", operationId: "getMemory", summary: "One memory with its loss report and provenance", tag: "memories",
    answers: { 200: json("The memory in full.", "MemoryDetail", res.MemoryDetailAnswer) }, errors: ON_PROCESS,
  },
  {
    method: "get", path: "/v1/processes/{processId}/memories/{memoryId}/sources", operationId: "getMemorySources", summary: "The messages a summary folded", tag: "memories",
    answers: { 200: json("The memory and its source messages.", "MemorySources", res.MemorySourcesAnswer) }, errors: ON_PROCESS,
  },
  {
    method: "post", path: "/v1/processes/{processId}/memories/{memoryId}/revert", operationId: "revertMemory", summary: "Undo the newest compaction", tag: "memories",
    description: "Only the newest active summary can be undone; the memory stays, REVERTED, for audit. docs/compaction.md, \"Undoing a compaction\".",
    answers: { 200: json("The memory, now REVERTED, and what is active again.", "RevertAnswer", res.RevertAnswer) }, errors: [...ON_PROCESS, 409],
  },
  {
    method: "get", path: "/v1/processes/{processId}/history/search", operationId: "searchHistory", summary: "Full-text search over every message", tag: "memories",
    query: req.SearchQuery, answers: { 200: json("The best matches, archived messages included.", "SearchAnswer", res.SearchAnswer) }, errors: ON_PROCESS,
  },
  {
    method: "get", path: "/v1/settings", operationId: "getSettings", summary: "Compaction tunables of the tenant or a project", tag: "settings",
    query: req.SettingsQuery, answers: { 200: json("The overrides and the effective tunables.", "Settings", res.SettingsAnswer) }, errors: V1,
  },
  {
    method: "put", path: "/v1/settings", operationId: "putSettings", summary: "Override compaction tunables", tag: "settings",
    query: req.SettingsQuery, body: ["SettingsInput", TunablesOverride], example: { softThreshold: 0.5, summaryMaxTokens: 800 },
    answers: { 200: json("The overrides and the effective tunables.", "Settings", res.SettingsAnswer) }, errors: [...V1, 413],
  },
  {
    method: "get", path: "/v1/inbox", operationId: "listInbox", summary: "List inbox offers", tag: "inbox",
    query: req.InboxQuery, answers: { 200: json("The items.", "InboxList", res.InboxList) }, errors: V1,
  },
  {
    method: "post", path: "/v1/inbox/{itemId}/answer", operationId: "answerInboxItem", summary: "Accept or decline an offer", tag: "inbox",
    body: ["AnswerInput", req.AnswerBody], example: { accepted: true },
    answers: { 200: json("The answered item.", "InboxItemAnswer", res.InboxItemAnswer) }, errors: [...WITH_BODY, 409],
  },
  {
    method: "get", path: "/local/events", operationId: "localListEvents", summary: "Events the service published (local runner only)", tag: "local",
    answers: { 200: json("The key's tenant's events, oldest first, of the newest 1,000 kept.", "LocalEvents", res.LocalEventsAnswer) }, errors: [401, 500],
  },
  {
    method: "post", path: "/local/eventbridge", operationId: "localPutEvents", summary: "EventBridge PutEvents, AWS JSON 1.1 (local runner only)", tag: "local",
    headers: { "X-Amz-Target": { description: "The EventBridge operation.", enum: ["AWSEvents.PutEvents"] } },
    body: ["PutEventsInput", PutEventsInput], bodyMediaType: AWS_JSON,
    example: { Entries: [{ Source: "vancetope.plan", DetailType: "PlanCompleted", Detail: '{"tenantId":"local","processId":"p-1","planId":"plan-1","topicLabel":"migration","completedAt":"2026-05-01T11:00:00Z"}' }] },
    answers: {
      200: { description: "Which entries were delivered.", body: ["PutEventsAnswer", PutEventsAnswer], mediaType: AWS_JSON },
      400: { description: "An unknown target, a body that is not JSON, or not 1 to 10 entries.", body: ["AwsJsonError", AwsJsonError] },
      401: { description: "No known API key (a bearer token, or the access key id of the SigV4 signature).", body: ["AwsJsonError", AwsJsonError] },
      413: { description: "A body past 256 KB (EventBridge's own limit), refused before it is read whole.", body: ["AwsJsonError", AwsJsonError] },
    },
    errors: [500],
  },
];
