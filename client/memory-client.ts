/**
 * A typed client for engines: one method per endpoint of the HTTP API, `beginTurn` for the
 * per-turn call, and one error type. Plain `fetch`, no runtime dependencies.
 */
import type { AppendMessageInput, BeginTurnInput, CompactInput, CompactRangeInput, UpsertProcessInput } from "./input-types.js";
import type {
  CompactionAnswer,
  InboxItem,
  Memory,
  MemoryContext,
  MemoryDetail,
  MemorySources,
  Message,
  Page,
  Process,
  RangeCompactionResult,
  RevertResult,
  SearchHit,
  Settings,
  SettingsInput,
  Strength,
  Turn,
} from "./types.js";
import {
  aborted,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  fromEnv,
  MAX_RETRY_AFTER_MS,
  MemoryApiError,
  pause,
  retryAfterMs,
  type MemoryClientOptions,
  type RequestOptions,
} from "./client-options.js";

export { MemoryApiError, type MemoryClientOptions, type RequestOptions };

type QueryValue = string | number | boolean | undefined;

/** The media type of an export (docs/api.md, "Export and import"). */
const NDJSON = "application/x-ndjson";

export interface MemoryClient {
  /**
   * The per-turn call: appends `message` (if given), compacts if needed, and returns the active
   * messages with the memory block for the system prompt, in one request.
   */
  beginTurn(processId: string, input: BeginTurnInput, options?: RequestOptions): Promise<Turn>;
  upsertProcess(processId: string, input: UpsertProcessInput, options?: RequestOptions): Promise<Process>;
  getProcess(processId: string, options?: RequestOptions): Promise<Process>;
  /**
   * Deletes the process and every item of it (docs/api.md, "Deleting a process"): `deleted` once
   * all is erased, `deleting` while a large process is erased in the background (call again to
   * follow it). Safe to repeat; an unknown id throws MemoryApiError 404 `process.not_found`.
   */
  deleteProcess(processId: string, options?: RequestOptions): Promise<{ status: "deleted" | "deleting" }>;
  listProcesses(query?: { projectId?: string; limit?: number; cursor?: string }, options?: RequestOptions): Promise<Page<Process>>;
  /**
   * The export of a process (docs/api.md, "Export and import"), one NDJSON line at a time (without
   * its newline), following the pages of a large process.
   */
  exportProcess(processId: string, options?: RequestOptions): AsyncIterable<string>;
  /**
   * Restores an export (its lines, or the NDJSON text) into `processId`, which must be new
   * (409 `process.exists`); `remapIds` gives messages and memories new ids. A bad file throws a
   * MemoryApiError 400 naming its line (`details.line`), and nothing is written. `settings` says
   * whether the file's project settings were restored (only where the project had none).
   */
  importProcess(
    processId: string,
    exported: string | Iterable<string> | AsyncIterable<string>,
    options?: RequestOptions & { remapIds?: boolean },
  ): Promise<{ process: Process; messages: number; memories: number; settings: "restored" | "kept" | "refused" | "none" }>;
  /** `created` is false when the idempotency key repeated and the first message came back. */
  appendMessage(processId: string, input: AppendMessageInput, options?: RequestOptions): Promise<{ message: Message; created: boolean }>;
  listMessages(
    processId: string,
    query?: { view?: "active" | "all"; limit?: number; cursor?: string },
    options?: RequestOptions,
  ): Promise<Page<Message>>;
  /** One message by id, archived or not. */
  getMessage(processId: string, messageId: string, options?: RequestOptions): Promise<Message>;
  /**
   * Sets the message's one STRENGTH tag (`null` removes it). Only an active message can change:
   * an archived one throws MemoryApiError 409 `message.archived`.
   */
  setMessageStrength(processId: string, messageId: string, strength: Strength | null, options?: RequestOptions): Promise<Message>;
  compact(processId: string, input: CompactInput, options?: RequestOptions): Promise<CompactionAnswer>;
  compactRange(processId: string, input: CompactRangeInput, options?: RequestOptions): Promise<RangeCompactionResult>;
  getContext(processId: string, query?: { query?: string }, options?: RequestOptions): Promise<MemoryContext>;
  listMemories(
    processId: string,
    query?: {
      kind?: "ARCHIVED_CHAT";
      includeSuperseded?: boolean;
      includeFailed?: boolean;
      includePrepared?: boolean;
      includeReverted?: boolean;
    },
    options?: RequestOptions,
  ): Promise<{ items: Memory[] }>;
  /** One summary with its whole loss report and the messages each of its lines came from. */
  getMemory(processId: string, memoryId: string, options?: RequestOptions): Promise<MemoryDetail>;
  /** The original messages a summary folded (archived ones are kept and readable). */
  getMemorySources(processId: string, memoryId: string, options?: RequestOptions): Promise<MemorySources>;
  /**
   * Undoes the newest compaction: its messages are active again and the summary it superseded is
   * replayed again. 409 (`memory.not_newest`, `memory.failed`, `memory.reverted`, `process.busy`)
   * throws MemoryApiError.
   */
  revertMemory(processId: string, memoryId: string, options?: RequestOptions): Promise<RevertResult>;
  searchHistory(processId: string, query: { q: string; tag?: string; limit?: number }, options?: RequestOptions): Promise<{ items: SearchHit[] }>;
  listInbox(query?: { processId?: string; status?: InboxItem["status"] }, options?: RequestOptions): Promise<{ items: InboxItem[] }>;
  answerInboxItem(itemId: string, input: { accepted: boolean }, options?: RequestOptions): Promise<InboxItem>;
  /** The tunables overrides of the tenant, or of one project, and the tunables in effect. */
  getSettings(query?: { projectId?: string }, options?: RequestOptions): Promise<Settings>;
  /**
   * Stores overrides of the tenant, or of one project (docs/configuration.md, "Tunables"); a result the
   * summarizer's window cannot take is a MemoryApiError 400 naming the field.
   */
  updateSettings(input: SettingsInput, query?: { projectId?: string }, options?: RequestOptions): Promise<Settings>;
  /** `{ ok: true }` when the service answers (no key needed). */
  health(options?: RequestOptions): Promise<{ ok: true }>;
  /** The OpenAPI 3.1 document of the HTTP API (docs/openapi.json), as the service serves it. */
  getOpenApiDocument(options?: RequestOptions): Promise<Record<string, unknown>>;
}

/**
 * @example
 * // MEMORY_URL and MEMORY_API_KEY from the environment:
 * const memory = createMemoryClient();
 * // or named: createMemoryClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "local-dev-key", timeout: 10_000, maxRetries: 3 })
 * await memory.upsertProcess("frankie-42", { projectId: "acme", engine: "frankie" });
 * const turn = await memory.beginTurn("frankie-42", {
 *   message: { role: "user", content: "Fix the failing build" },
 *   model: { name: "gpt-4o" },
 * });
 * const messages = toOpenAIMessages(turn, { system: "You are Frankie." });
 */
export function createMemoryClient(options: MemoryClientOptions = {}): MemoryClient {
  const baseUrl = options.baseUrl ?? fromEnv("MEMORY_URL");
  const apiKey = options.apiKey ?? fromEnv("MEMORY_API_KEY");
  if (!baseUrl) throw new TypeError("createMemoryClient: pass baseUrl or set MEMORY_URL (e.g. http://127.0.0.1:3000)");
  if (!apiKey) throw new TypeError("createMemoryClient: pass apiKey or set MEMORY_API_KEY (locally: local-dev-key)");
  const base = baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const id = encodeURIComponent;

  interface CallInit extends RequestOptions {
    query?: Record<string, QueryValue>;
    body?: unknown;
    ndjson?: string;
    text?: boolean;
    auth?: false;
  }

  /** One attempt: a timeout of its own, and the caller's signal. */
  async function attempt<T>(method: string, path: string, url: string, init: CallInit, timeoutMs: number) {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const onAbort = () => timeout.abort();
    init.signal?.addEventListener("abort", onAbort, { once: true });
    let res: Response;
    let text: string;
    try {
      res = await doFetch(url, {
        method,
        headers: {
          ...(init.auth === false ? {} : { authorization: `Bearer ${apiKey}` }),
          accept: init.text ? `${NDJSON}, application/json` : "application/json",
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
          ...(init.ndjson !== undefined ? { "content-type": NDJSON } : {}),
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        ...(init.ndjson !== undefined ? { body: init.ndjson } : {}),
        signal: timeout.signal,
      });
      text = await res.text();
    } catch (e) {
      if (init.signal?.aborted) throw aborted(method, path, e);
      if (timeout.signal.aborted) {
        throw new MemoryApiError(0, "request.timeout", `${method} ${path}: no answer within ${timeoutMs} ms`, undefined, { cause: e });
      }
      throw new MemoryApiError(0, "network.error", `${method} ${path}: ${e instanceof Error ? e.message : String(e)}`, undefined, {
        cause: e,
      });
    } finally {
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onAbort);
    }
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
        { retryAfterMs: retryAfterMs(res.headers, error?.details) },
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

  /** The attempts of one call: the same request each time, after a backoff or the asked wait. */
  async function call<T>(
    method: "GET" | "PUT" | "POST" | "PATCH" | "DELETE",
    path: string,
    init: CallInit = {},
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const search = params.toString();
    const url = `${base}${path}${search ? `?${search}` : ""}`;
    const timeoutMs = init.timeout ?? options.timeout ?? DEFAULT_TIMEOUT_MS;
    const maxRetries = init.maxRetries ?? options.maxRetries ?? DEFAULT_MAX_RETRIES;
    for (let retry = 0; ; retry++) {
      if (init.signal?.aborted) throw aborted(method, path, init.signal.reason);
      try {
        return await attempt<T>(method, path, url, init, timeoutMs);
      } catch (e) {
        if (!(e instanceof MemoryApiError) || !e.retryable || retry >= maxRetries) throw e;
        if (e.retryAfterMs !== undefined && e.retryAfterMs > MAX_RETRY_AFTER_MS) throw e;
        // Exponential backoff with jitter (0.5 s, 1 s, 2 s, … up to 8 s), or the wait the answer named.
        const wait = e.retryAfterMs ?? Math.min(8000, 500 * 2 ** retry) * (0.75 + Math.random() * 0.5);
        await pause(wait, init.signal).catch((reason: unknown) => {
          throw aborted(method, path, reason);
        });
      }
    }
  }

  const get = async <T>(path: string, query: Record<string, QueryValue> | undefined, request: RequestOptions | undefined) =>
    (await call<T>("GET", path, { ...request, query: query ?? {} })).body;
  const post = async <T>(path: string, body: unknown, request: RequestOptions | undefined) => (await call<T>("POST", path, { ...request, body })).body;
  const processPath = (processId: string) => `/v1/processes/${id(processId)}`;
  /**
   * A message that may be sent more than once carries an idempotency key, so that a retry of an
   * append that did reach the service answers the first message instead of storing it again.
   */
  const withKey = <M extends AppendMessageInput | undefined>(message: M, request: RequestOptions | undefined): M => {
    const retries = request?.maxRetries ?? options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!message || message.idempotencyKey !== undefined || retries === 0) return message;
    return { ...message, idempotencyKey: `c-${globalThis.crypto.randomUUID()}` };
  };

  return {
    beginTurn: (processId, input, request) =>
      post<Turn>(`${processPath(processId)}/turns`, input.message ? { ...input, message: withKey(input.message, request) } : input, request),

    upsertProcess: async (processId, input, request) =>
      (await call<{ process: Process }>("PUT", processPath(processId), { ...request, body: input })).body.process,

    getProcess: async (processId, request) => (await get<{ process: Process }>(processPath(processId), undefined, request)).process,

    async deleteProcess(processId, request) {
      const { status } = await call<{ status: "deleting" }>("DELETE", processPath(processId), { ...request });
      return { status: status === 204 ? "deleted" : "deleting" };
    },

    listProcesses: (query = {}, request) => get<Page<Process>>("/v1/processes", query, request),

    async *exportProcess(processId, request) {
      let cursor: string | undefined;
      do {
        const { body, headers } = await call<string>("GET", `${processPath(processId)}/export`, { ...request, query: { cursor }, text: true });
        for (const line of body.split("\n")) if (line !== "") yield line;
        cursor = headers.get("export-next-cursor") ?? undefined;
      } while (cursor);
    },

    async importProcess(processId, exported, { remapIds = false, ...request } = {}) {
      let ndjson = "";
      if (typeof exported === "string") ndjson = exported;
      else for await (const line of exported) ndjson += `${line}\n`;
      const query = { remapIds: remapIds ? "true" : undefined };
      return (
        await call<Awaited<ReturnType<MemoryClient["importProcess"]>>>("POST", `${processPath(processId)}/import`, { ...request, query, ndjson })
      ).body;
    },

    async appendMessage(processId, input, request) {
      const { status, body } = await call<{ message: Message }>("POST", `${processPath(processId)}/messages`, {
        ...request,
        body: withKey(input, request),
      });
      return { message: body.message, created: status === 201 };
    },

    listMessages: (processId, query = {}, request) => get<Page<Message>>(`${processPath(processId)}/messages`, query, request),

    getMessage: async (processId, messageId, request) =>
      (await get<{ message: Message }>(`${processPath(processId)}/messages/${id(messageId)}`, undefined, request)).message,

    setMessageStrength: async (processId, messageId, strength, request) =>
      (await call<{ message: Message }>("PATCH", `${processPath(processId)}/messages/${id(messageId)}`, { ...request, body: { strength } })).body
        .message,

    compact: (processId, input, request) => post<CompactionAnswer>(`${processPath(processId)}/compaction`, input, request),

    compactRange: (processId, input, request) => post<RangeCompactionResult>(`${processPath(processId)}/compaction/range`, input, request),

    getContext: (processId, query = {}, request) => get<MemoryContext>(`${processPath(processId)}/context`, query, request),

    listMemories: (processId, query = {}, request) => get<{ items: Memory[] }>(`${processPath(processId)}/memories`, query, request),

    getMemory: (processId, memoryId, request) => get<MemoryDetail>(`${processPath(processId)}/memories/${id(memoryId)}`, undefined, request),

    getMemorySources: (processId, memoryId, request) =>
      get<MemorySources>(`${processPath(processId)}/memories/${id(memoryId)}/sources`, undefined, request),

    revertMemory: (processId, memoryId, request) => post<RevertResult>(`${processPath(processId)}/memories/${id(memoryId)}/revert`, {}, request),

    searchHistory: (processId, query, request) => get<{ items: SearchHit[] }>(`${processPath(processId)}/history/search`, query, request),

    listInbox: (query = {}, request) => get<{ items: InboxItem[] }>("/v1/inbox", query, request),

    answerInboxItem: async (itemId, input, request) => (await post<{ item: InboxItem }>(`/v1/inbox/${id(itemId)}/answer`, input, request)).item,

    getSettings: (query = {}, request) => get<Settings>("/v1/settings", query, request),

    updateSettings: async (input, query = {}, request) => (await call<Settings>("PUT", "/v1/settings", { ...request, query, body: input })).body,

    health: async (request) => (await call<{ ok: true }>("GET", "/health", { ...request, auth: false })).body,

    getOpenApiDocument: async (request) => (await call<Record<string, unknown>>("GET", "/openapi.json", { ...request, auth: false })).body,
  };
}
