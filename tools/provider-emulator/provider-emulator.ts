/**
 * A local server that answers like the Anthropic, OpenAI Responses and Gemini APIs and enforces
 * their documented rules on native reasoning content (signed thinking blocks, encrypted reasoning
 * items, thought signatures). Built on tools/llm-wire-server.ts: tests drive it with the real SDKs
 * and read back what each request carried and what the emulator verified or dropped.
 */
import {
  startLlmWireServer,
  type LlmWireServer,
  type RecordedRequest,
  type ScriptedReply,
} from "../llm-wire-server.js";
import {
  anthropicTurnKey,
  buildAnthropicMessage,
  checkAnthropicRequest,
  THINKING_BINDING_BETA,
  type AnthropicBlockRef,
  type AnthropicDroppedBlock,
  type AnthropicTurnScript,
  type IssuedAnthropicTurn,
} from "./anthropic-rules.js";
import {
  buildCompactionAnswer,
  checkCompactionRequest,
  COMPACTION_MODELS,
  emulatedSummary,
  expandCompaction,
  modelInfo,
  type StoredCompaction,
} from "./anthropic-compaction.js";
import { anthropicSseBody } from "./anthropic-stream.js";
import { buildGeminiResponse, checkGeminiRequest, type GeminiTurnScript } from "./gemini-rules.js";
import {
  buildOpenAIResponse,
  checkOpenAIResponsesRequest,
  expandItemReferences,
  type OpenAIResponsesTurnScript,
} from "./openai-responses-rules.js";
import { openAIResponsesSseBody } from "./openai-responses-stream.js";
import { buildChatCompletion, buildCompactedResponse, expandCompactionWindow, type StoredWindow } from "./openai-compaction.js";
import { createSigner } from "./signing.js";

export type EmulatedProvider = "anthropic" | "openai-responses" | "gemini";

/** A scripted turn, or a function of the request that returns one. */
export type TurnSource<T> = T | ((request: RecordedRequest) => T);

export interface ProviderEmulatorOptions {
  /** Signing secret (default: random per server). */
  secret?: Uint8Array;
  /** Run Anthropic's prefix check on thinking blocks (models with preserved thinking; default true). */
  preservedThinking?: boolean;
  /** Drop OpenAI reasoning items after a prefix change (newer frontier models; default true). */
  preservedReasoning?: boolean;
  /** Count OpenAI request-level `instructions` in a reasoning item's prefix (models before GPT-6.2; default true). */
  instructionsInPrefix?: boolean;
  /** Anthropic models whose Models API entry supports on-demand compaction (default: those the pages list). */
  compactionModels?: readonly string[];
}

/** What the emulator made of one request. */
export interface EmulatorRecord {
  provider: EmulatedProvider;
  request: RecordedRequest;
  status: number;
  /** The rule a rejected request broke. */
  rule?: string;
  message?: string;
  responseId?: string;
  /** Anthropic: blocks that verified, blocks dropped by `drop_block`, blocks issued in the answer. */
  thinking?: { verified: AnthropicBlockRef[]; dropped: AnthropicDroppedBlock[]; issued: AnthropicBlockRef[] };
  /** OpenAI: reasoning item ids kept, dropped after a prefix change, issued in the answer. */
  reasoning?: { kept: string[]; dropped: string[]; issued: string[] };
  /** A compaction request (Anthropic's `compaction` parameter, OpenAI's `/responses/compact`) that succeeded. */
  compaction?: boolean;
  /** The request led with a compaction block or window this emulator wrote, read as the conversation it stands for. */
  expanded?: boolean;
  /** Gemini: `contents.{i}.parts.{j}` whose signature verified. */
  signatures?: { verified: string[] };
}

export interface ProviderEmulator {
  /** `http://127.0.0.1:<port>`: Anthropic's `baseURL`; OpenAI wants `${url}/v1`. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** One record per emulated request, oldest first. */
  readonly records: EmulatorRecord[];
  /**
   * The underlying wire server: `wire.reply(...)` answers the next requests verbatim (e.g. a 529)
   * before the emulator. Reset through the emulator's `reset`; `wire.reset` would unhook it.
   */
  readonly wire: LlmWireServer;
  anthropic: {
    /** Queues turns, one per `POST /v1/messages`; when empty, a thinking block (if on) and "ok". */
    script(...turns: Array<TurnSource<AnthropicTurnScript>>): void;
    /**
     * Every assistant turn this emulator issued that later came back without the thinking
     * blocks it was issued with, as readable lines (empty when all came back whole).
     */
    missingThinking(): string[];
    /** Queues summaries for the next compaction requests (default: the emulator's extractive one). */
    scriptCompaction(...summaries: string[]): void;
  };
  openai: {
    /** Queues turns, one per `POST /v1/responses`. */
    script(...turns: Array<TurnSource<OpenAIResponsesTurnScript>>): void;
    /** Reasoning items received intact and kept vs dropped after a prefix change, over all requests. */
    reasoningCounts(): { kept: number; dropped: number };
    /** Queues answers for the next `POST /v1/chat/completions` (default: a `<summary>` of the last user message). */
    scriptChat(...texts: string[]): void;
  };
  gemini: {
    /** Queues turns, one per `generateContent` / `streamGenerateContent`. */
    script(...turns: Array<TurnSource<GeminiTurnScript>>): void;
  };
  /** Forgets requests, records, scripts and issued content (the secret stays). */
  reset(): void;
  close(): Promise<void>;
}

const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/**
 * Starts the emulator on 127.0.0.1 at a random free port.
 *
 * @example
 * const emulator = await startProviderEmulator();
 * emulator.anthropic.script({ thinking: "Read the log first.", toolUses: [{ name: "read_log", input: {} }] });
 * const client = new Anthropic({ apiKey: "test", baseURL: emulator.url });
 */
export async function startProviderEmulator(options: ProviderEmulatorOptions = {}): Promise<ProviderEmulator> {
  const wire = await startLlmWireServer();
  const signer = createSigner(options.secret);
  const records: EmulatorRecord[] = [];
  const anthropicQueue: Array<TurnSource<AnthropicTurnScript>> = [];
  const openaiQueue: Array<TurnSource<OpenAIResponsesTurnScript>> = [];
  const geminiQueue: Array<TurnSource<GeminiTurnScript>> = [];
  const issuedTurns = new Map<string, IssuedAnthropicTurn>();
  const storedReasoning = new Map<string, string>();
  const storedItems = new Map<string, unknown>();
  const compactions = new Map<string, StoredCompaction>();
  const windows = new Map<string, StoredWindow>();
  const summaries: string[] = [];
  const chats: string[] = [];
  const compactionModels = options.compactionModels ?? COMPACTION_MODELS;
  let counter = 0;

  const next = <T>(queue: Array<TurnSource<T>>, request: RecordedRequest): T | undefined => {
    const source = queue.shift();
    return typeof source === "function" ? (source as (r: RecordedRequest) => T)(request) : source;
  };
  const json = (status: number, body: unknown): ScriptedReply => ({ status, body });

  const anthropic = (request: RecordedRequest): ScriptedReply => {
    const sent = request.body;
    const reject = (c: { status: number; rule: string; message: string; body: unknown }) => {
      records.push({ provider: "anthropic", request, status: c.status, rule: c.rule, message: c.message });
      return json(c.status, c.body);
    };
    // A leading compaction block is read as the conversation it summarized (anthropic-compaction.ts).
    const expansion = expandCompaction(sent, signer, compactions);
    if (!expansion.ok) return reject(expansion);
    const body = expansion.body;
    const beta = String(request.headers["anthropic-beta"] ?? "").split(",").map((s) => s.trim());
    const refused = sent?.compaction != null ? checkCompactionRequest(sent, beta, body, compactionModels) : null;
    if (refused) return reject(refused);
    const check = checkAnthropicRequest(body, {
      signer,
      issued: issuedTurns,
      preservedThinking: options.preservedThinking,
    });
    if (!check.ok) return reject(check);
    const id = `msg_emu_${++counter}`;
    const expanded = expansion.block !== null ? { expanded: true } : {};
    if (sent?.compaction != null) {
      const answer = buildCompactionAnswer(body, emulatedSummary(sent, summaries.shift()), { signer, id, store: compactions });
      records.push({ provider: "anthropic", request, status: 200, responseId: id, compaction: true, ...expanded, thinking: { verified: check.verified, dropped: check.dropped, issued: [] } });
      return json(200, answer);
    }
    const built = buildAnthropicMessage(body, next(anthropicQueue, request) ?? {}, {
      signer,
      id,
      inputTransformations: beta.includes(THINKING_BINDING_BETA) ? check.inputTransformations : undefined,
    });
    issuedTurns.set(built.issued.key, built.issued);
    records.push({
      provider: "anthropic",
      request,
      status: 200,
      responseId: id,
      ...expanded,
      thinking: { verified: check.verified, dropped: check.dropped, issued: built.issued.thinking },
    });
    if (sent?.stream === true) {
      return { status: 200, headers: { "content-type": "text/event-stream" }, body: anthropicSseBody(built.body) };
    }
    return json(200, built.body);
  };

  const openai = (request: RecordedRequest, compact = false): ScriptedReply => {
    const reject = (c: { status: number; rule: string; message: string; body: unknown }) => {
      records.push({ provider: "openai-responses", request, status: c.status, rule: c.rule, message: c.message });
      return json(c.status, c.body);
    };
    const referenced = expandItemReferences(request.body, storedItems);
    if (!referenced.ok) return reject(referenced);
    // A compaction window as returned is read as the items it compacted (openai-compaction.ts).
    const expansion = expandCompactionWindow(referenced.body, signer, windows);
    if (!expansion.ok) return reject(expansion);
    const body = expansion.body;
    const check = checkOpenAIResponsesRequest(body, {
      signer,
      stored: storedReasoning,
      // The compaction pass reads reasoning to carry it forward: only its content must be intact.
      preservedReasoning: compact ? false : options.preservedReasoning,
      instructionsInPrefix: options.instructionsInPrefix,
    });
    if (!check.ok) return reject(check);
    const id = `resp_emu${++counter}`;
    const expanded = expansion.compactions > 0 ? { expanded: true } : {};
    if (compact) {
      const answer = buildCompactedResponse(referenced.body, body, { signer, id, store: windows });
      if (answer.ok === false) return reject(answer as { status: number; rule: string; message: string; body: unknown });
      records.push({ provider: "openai-responses", request, status: 200, responseId: id, compaction: true, ...expanded, reasoning: { kept: check.kept, dropped: check.dropped, issued: [] } });
      return json(200, answer);
    }
    const built = buildOpenAIResponse(body, next(openaiQueue, request) ?? {}, {
      signer,
      id,
      inputTransformations: check.inputTransformations,
      instructionsInPrefix: options.instructionsInPrefix,
    });
    if (body?.store !== false) {
      for (const r of built.reasoning) storedReasoning.set(r.id, r.prefixHash);
      for (const item of built.body.output) storedItems.set(item.id, structuredClone(item));
    }
    records.push({
      provider: "openai-responses",
      request,
      status: 200,
      responseId: id,
      ...expanded,
      reasoning: { kept: check.kept, dropped: check.dropped, issued: built.reasoning.map((r) => r.id) },
    });
    if (body?.stream === true) {
      return { status: 200, headers: { "content-type": "text/event-stream" }, body: openAIResponsesSseBody(built.body) };
    }
    return json(200, built.body);
  };

  const gemini = (request: RecordedRequest, model: string, stream: boolean): ScriptedReply => {
    const check = checkGeminiRequest(request.body, { signer });
    if (!check.ok) {
      records.push({ provider: "gemini", request, status: check.status, rule: check.rule, message: check.message });
      return json(check.status, check.body);
    }
    records.push({ provider: "gemini", request, status: 200, signatures: { verified: check.verified } });
    const answer = buildGeminiResponse(request.body, next(geminiQueue, request) ?? {}, { signer, model });
    // streamGenerateContent?alt=sse: the whole answer as one `data:` event.
    if (stream) return { status: 200, headers: { "content-type": "text/event-stream" }, body: `data: ${JSON.stringify(answer)}\r\n\r\n` };
    return json(200, answer);
  };

  const route = (request: RecordedRequest): ScriptedReply => {
    if (request.method === "POST" && request.path === "/v1/messages") return anthropic(request);
    if (request.method === "POST" && request.path === "/v1/responses") return openai(request);
    if (request.method === "POST" && request.path === "/v1/responses/compact") return openai(request, true);
    if (request.method === "POST" && request.path === "/v1/chat/completions") return json(200, buildChatCompletion(request.body, `chatcmpl_emu${++counter}`, chats.shift()));
    const model = request.method === "GET" ? /^\/v1\/models\/([^/]+)$/.exec(request.path) : null;
    if (model) return json(200, modelInfo(decodeURIComponent(model[1]!), compactionModels));
    const gem = request.method === "POST" ? GEMINI_PATH.exec(request.path) : null;
    if (gem) return gemini(request, decodeURIComponent(gem[1]!), gem[2] === "streamGenerateContent");
    // 400 rather than 404/5xx so an unexpected call fails a test at once instead of being retried.
    return json(400, { error: { message: `provider-emulator: ${request.method} ${request.path} is not emulated` } });
  };
  wire.setFallback(route);

  return {
    url: wire.url,
    requests: wire.requests,
    records,
    wire,
    anthropic: {
      script: (...turns) => void anthropicQueue.push(...turns),
      missingThinking: () => {
        const problems: string[] = [];
        records.forEach((record, n) => {
          if (record.provider !== "anthropic") return;
          const messages: any[] = Array.isArray(record.request.body?.messages) ? record.request.body.messages : [];
          messages.forEach((m, i) => {
            if (m?.role !== "assistant") return;
            const issued = issuedTurns.get(anthropicTurnKey(m.content));
            if (!issued || issued.thinking.length === 0) return;
            const sent = new Set(
              (Array.isArray(m.content) ? m.content : []).map((b: any) =>
                b?.type === "thinking" ? b.signature : b?.type === "redacted_thinking" ? b.data : undefined,
              ),
            );
            const missing = issued.thinking.filter((t) => !sent.has(t.token));
            if (missing.length > 0) {
              problems.push(
                `request ${n} messages.${i}: turn ${issued.responseId} came back without ${missing.length} of its ${issued.thinking.length} thinking block(s)`,
              );
            }
          });
        });
        return problems;
      },
      scriptCompaction: (...texts) => void summaries.push(...texts),
    },
    openai: {
      script: (...turns) => void openaiQueue.push(...turns),
      scriptChat: (...texts) => void chats.push(...texts),
      reasoningCounts: () =>
        records.reduce(
          (sum, r) => ({ kept: sum.kept + (r.reasoning?.kept.length ?? 0), dropped: sum.dropped + (r.reasoning?.dropped.length ?? 0) }),
          { kept: 0, dropped: 0 },
        ),
    },
    gemini: {
      script: (...turns) => void geminiQueue.push(...turns),
    },
    reset: () => {
      wire.reset();
      wire.setFallback(route);
      records.length = 0;
      anthropicQueue.length = 0;
      openaiQueue.length = 0;
      geminiQueue.length = 0;
      issuedTurns.clear();
      storedReasoning.clear();
      storedItems.clear();
      compactions.clear();
      windows.clear();
      summaries.length = 0;
      chats.length = 0;
    },
    close: () => wire.close(),
  };
}
