/**
 * A typed client for engines: one method per endpoint of the HTTP API, `beginTurn` for the
 * per-turn call, and one error type. Plain `fetch`, no runtime dependencies.
 */
import type {
  AppendMessageInput,
  BeginTurnInput,
  CompactInput,
  CompactRangeInput,
  CompactionResult,
  InboxItem,
  Memory,
  MemoryContext,
  Message,
  Page,
  Process,
  RangeCompactionResult,
  RevertResult,
  SearchHit,
  Strength,
  Turn,
  UpsertProcessInput,
} from "./types.js";

export interface MemoryClientOptions {
  /** Where the service runs, e.g. `http://127.0.0.1:3000` or the API Gateway URL. */
  baseUrl: string;
  apiKey: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * An error answer of the service (`{ error: { code, message, details? } }`), or `status` 0 with
 * code `network.error` when no answer arrived.
 */
export class MemoryApiError extends Error {
  override readonly name = "MemoryApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Worth retrying with the same idempotency key: no answer, 408, 409, 429 or 5xx. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 408 || this.status === 409 || this.status === 429 || this.status >= 500;
  }
}

type QueryValue = string | number | boolean | undefined;

/** The media type of an export (docs/api.md, "Export and import"). */
const NDJSON = "application/x-ndjson";

export interface MemoryClient {
  /**
   * The per-turn call: appends `message` (if given), compacts if needed, and returns the active
   * messages with the memory block for the system prompt, in one request.
   */
  beginTurn(processId: string, input: BeginTurnInput): Promise<Turn>;
  upsertProcess(processId: string, input: UpsertProcessInput): Promise<Process>;
  getProcess(processId: string): Promise<Process>;
  /**
   * Deletes the process and every item of it (docs/api.md, "Deleting a process"): `deleted` once
   * all is erased, `deleting` while a large process is erased in the background (call again to
   * follow it). Safe to repeat; an unknown id throws MemoryApiError 404 `process.not_found`.
   */
  deleteProcess(processId: string): Promise<{ status: "deleted" | "deleting" }>;
  listProcesses(query?: { projectId?: string; limit?: number; cursor?: string }): Promise<Page<Process>>;
  /**
   * The export of a process (docs/api.md, "Export and import"), one NDJSON line at a time (without
   * its newline), following the pages of a large process.
   */
  exportProcess(processId: string): AsyncIterable<string>;
  /**
   * Restores an export (its lines, or the NDJSON text) into `processId`, which must be new
   * (409 `process.exists`); `remapIds` gives messages and memories new ids. A bad file throws a
   * MemoryApiError 400 naming its line (`details.line`), and nothing is written. `settings` says
   * whether the file's project settings were restored (only where the project had none).
   */
  importProcess(
    processId: string,
    exported: string | Iterable<string> | AsyncIterable<string>,
    options?: { remapIds?: boolean },
  ): Promise<{ process: Process; messages: number; memories: number; settings: "restored" | "kept" | "refused" | "none" }>;
  /** `created` is false when the idempotency key repeated and the first message came back. */
  appendMessage(processId: string, input: AppendMessageInput): Promise<{ message: Message; created: boolean }>;
  listMessages(
    processId: string,
    query?: { view?: "active" | "all"; limit?: number; cursor?: string },
  ): Promise<Page<Message>>;
  /** One message by id, archived or not. */
  getMessage(processId: string, messageId: string): Promise<Message>;
  /**
   * Sets the message's one STRENGTH tag (`null` removes it). Only an active message can change:
   * an archived one throws MemoryApiError 409 `message.archived`.
   */
  setMessageStrength(processId: string, messageId: string, strength: Strength | null): Promise<Message>;
  compact(processId: string, input: CompactInput): Promise<CompactionResult>;
  compactRange(processId: string, input: CompactRangeInput): Promise<RangeCompactionResult>;
  getContext(processId: string, query?: { query?: string }): Promise<MemoryContext>;
  listMemories(
    processId: string,
    query?: {
      kind?: "ARCHIVED_CHAT";
      includeSuperseded?: boolean;
      includeFailed?: boolean;
      includePrepared?: boolean;
      includeReverted?: boolean;
    },
  ): Promise<{ items: Memory[] }>;
  /**
   * Undoes the newest compaction: its messages are active again and the summary it superseded is
   * replayed again. 409 (`memory.not_newest`, `memory.failed`, `memory.reverted`, `process.busy`)
   * throws MemoryApiError.
   */
  revertMemory(processId: string, memoryId: string): Promise<RevertResult>;
  searchHistory(processId: string, query: { q: string; tag?: string; limit?: number }): Promise<{ items: SearchHit[] }>;
  listInbox(query?: { processId?: string; status?: InboxItem["status"] }): Promise<{ items: InboxItem[] }>;
  answerInboxItem(itemId: string, input: { accepted: boolean }): Promise<InboxItem>;
}

/**
 * @example
 * const memory = createMemoryClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "local-dev-key" });
 * await memory.upsertProcess("frankie-42", { projectId: "acme", engine: "frankie" });
 * const turn = await memory.beginTurn("frankie-42", {
 *   message: { role: "USER", content: "Fix the failing build" },
 *   model: { name: "gpt-4o" },
 * });
 * const messages = toOpenAIMessages(turn, { system: "You are Frankie." });
 */
export function createMemoryClient(options: MemoryClientOptions): MemoryClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const id = encodeURIComponent;

  async function call<T>(
    method: "GET" | "PUT" | "POST" | "PATCH" | "DELETE",
    path: string,
    init: { query?: Record<string, QueryValue>; body?: unknown; ndjson?: string; text?: boolean } = {},
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const search = params.toString();
    const url = `${base}${path}${search ? `?${search}` : ""}`;
    let res: Response;
    try {
      res = await doFetch(url, {
        method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: init.text ? `${NDJSON}, application/json` : "application/json",
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
          ...(init.ndjson !== undefined ? { "content-type": NDJSON } : {}),
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        ...(init.ndjson !== undefined ? { body: init.ndjson } : {}),
      });
    } catch (e) {
      throw new MemoryApiError(0, "network.error", `${method} ${path}: ${e instanceof Error ? e.message : String(e)}`, undefined, {
        cause: e,
      });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
      throw new MemoryApiError(
        res.status,
        typeof error?.code === "string" ? error.code : `http.${res.status}`,
        typeof error?.message === "string" ? error.message : `${method} ${path} answered ${res.status}`,
        error?.details,
      );
    }
    const headers = res.headers;
    // 204 No Content: the call's answer is its status alone.
    if (res.status === 204) return { status: res.status, body: undefined as T, headers };
    if (init.text) return { status: res.status, body: text as T, headers };
    if (parsed === undefined) {
      throw new MemoryApiError(res.status, "response.invalid", `${method} ${path}: the answer is not JSON`);
    }
    return { status: res.status, body: parsed as T, headers };
  }

  const get = async <T>(path: string, query?: Record<string, QueryValue>) => (await call<T>("GET", path, { query: query ?? {} })).body;
  const post = async <T>(path: string, body: unknown) => (await call<T>("POST", path, { body })).body;
  const processPath = (processId: string) => `/v1/processes/${id(processId)}`;

  return {
    beginTurn: (processId, input) => post<Turn>(`${processPath(processId)}/turns`, input),

    upsertProcess: async (processId, input) =>
      (await call<{ process: Process }>("PUT", processPath(processId), { body: input })).body.process,

    getProcess: async (processId) => (await get<{ process: Process }>(processPath(processId))).process,

    async deleteProcess(processId) {
      const { status } = await call<{ status: "deleting" }>("DELETE", processPath(processId));
      return { status: status === 204 ? "deleted" : "deleting" };
    },

    listProcesses: (query = {}) => get<Page<Process>>("/v1/processes", query),

    async *exportProcess(processId) {
      let cursor: string | undefined;
      do {
        const { body, headers } = await call<string>("GET", `${processPath(processId)}/export`, { query: { cursor }, text: true });
        for (const line of body.split("\n")) if (line !== "") yield line;
        cursor = headers.get("export-next-cursor") ?? undefined;
      } while (cursor);
    },

    async importProcess(processId, exported, { remapIds = false } = {}) {
      let ndjson = "";
      if (typeof exported === "string") ndjson = exported;
      else for await (const line of exported) ndjson += `${line}\n`;
      const query = { remapIds: remapIds ? "true" : undefined };
      return (await call<Awaited<ReturnType<MemoryClient["importProcess"]>>>("POST", `${processPath(processId)}/import`, { query, ndjson })).body;
    },

    async appendMessage(processId, input) {
      const { status, body } = await call<{ message: Message }>("POST", `${processPath(processId)}/messages`, { body: input });
      return { message: body.message, created: status === 201 };
    },

    listMessages: (processId, query = {}) => get<Page<Message>>(`${processPath(processId)}/messages`, query),

    getMessage: async (processId, messageId) =>
      (await get<{ message: Message }>(`${processPath(processId)}/messages/${id(messageId)}`)).message,

    setMessageStrength: async (processId, messageId, strength) =>
      (await call<{ message: Message }>("PATCH", `${processPath(processId)}/messages/${id(messageId)}`, { body: { strength } })).body
        .message,

    compact: (processId, input) => post<CompactionResult>(`${processPath(processId)}/compaction`, input),

    compactRange: (processId, input) => post<RangeCompactionResult>(`${processPath(processId)}/compaction/range`, input),

    getContext: (processId, query = {}) => get<MemoryContext>(`${processPath(processId)}/context`, query),

    listMemories: (processId, query = {}) => get<{ items: Memory[] }>(`${processPath(processId)}/memories`, query),

    revertMemory: (processId, memoryId) => post<RevertResult>(`${processPath(processId)}/memories/${id(memoryId)}/revert`, {}),

    searchHistory: (processId, query) => get<{ items: SearchHit[] }>(`${processPath(processId)}/history/search`, query),

    listInbox: (query = {}) => get<{ items: InboxItem[] }>("/v1/inbox", query),

    answerInboxItem: async (itemId, input) => (await post<{ item: InboxItem }>(`/v1/inbox/${id(itemId)}/answer`, input)).item,
  };
}
