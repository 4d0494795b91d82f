/**
 * A local HTTP server that speaks the OpenAI (`POST /v1/chat/completions`) and Anthropic
 * (`POST /v1/messages`) wire formats, so LLM adapters are tested through the real SDKs. Tests
 * script replies per request (status, body, headers, delay) and read back what was received.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: any;
  rawBody: string;
  /** `Date.now()` when the request was fully received. */
  receivedAt: number;
}

export interface ScriptedReply {
  /** Default 200. */
  status?: number;
  /** Serialised as JSON unless a string. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering: longer than the client's timeout simulates a hang. */
  delayMs?: number;
}

export type Script = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface LlmWireServer {
  /** `http://127.0.0.1:<port>`; OpenAI clients want `${url}/v1` as base URL. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** Queues replies, used one per request in order. */
  reply(...scripts: Script[]): void;
  /** Reply used once the queue is empty (default: a 400 naming the unscripted request). */
  setFallback(script: Script | undefined): void;
  /** Forgets recorded requests, queued replies and the fallback. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts the server on 127.0.0.1 at a random free port.
 *
 * @example
 * const server = await startLlmWireServer();
 * server.reply({ status: 503, body: openAIErrorBody("busy") }, { body: chatCompletionBody("<summary>ok</summary>") });
 */
export async function startLlmWireServer(): Promise<LlmWireServer> {
  const requests: RecordedRequest[] = [];
  const queue: Script[] = [];
  let fallback: Script | undefined;
  const timers = new Set<ReturnType<typeof setTimeout>>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0] ?? "",
        headers: req.headers,
        body,
        rawBody,
        receivedAt: Date.now(),
      };
      requests.push(recorded);

      const script = queue.shift() ?? fallback;
      const reply: ScriptedReply = script
        ? typeof script === "function"
          ? script(recorded)
          : script
        : {
            // 400 rather than 5xx: an unscripted request should fail a test fast, not be retried.
            status: 400,
            body: { error: { message: `llm-wire-server: no reply scripted for ${recorded.method} ${recorded.path}` } },
          };
      const send = () => {
        if (res.destroyed || res.writableEnded) return;
        writeReply(res, reply);
      };
      if (reply.delayMs && reply.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, reply.delayMs);
        timers.add(timer);
        // A client that gives up closes the socket; stop waiting for it.
        res.on("close", () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
      } else {
        send();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...scripts) => {
      queue.push(...scripts);
    },
    setFallback: (script) => {
      fallback = script;
    },
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      fallback = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function writeReply(res: ServerResponse, reply: ScriptedReply): void {
  const payload =
    typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {});
  res.writeHead(reply.status ?? 200, {
    "content-type": "application/json",
    ...reply.headers,
  });
  res.end(payload);
}

/** A Chat Completions answer whose message content is `content`. */
export function chatCompletionBody(
  content: string | null,
  options: { promptTokens?: number; completionTokens?: number; finishReason?: string; model?: string } = {},
): Record<string, unknown> {
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: options.model ?? "gpt-4o-mini",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null },
        finish_reason: options.finishReason ?? "stop",
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: options.promptTokens ?? 1000,
      completion_tokens: options.completionTokens ?? 200,
      total_tokens: (options.promptTokens ?? 1000) + (options.completionTokens ?? 200),
    },
  };
}

/** An OpenAI error body (`{ error: { message, type } }`). */
export function openAIErrorBody(message: string, type = "server_error"): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}

/** A Messages API answer with one text block holding `text`. */
export function anthropicMessageBody(
  text: string,
  options: { inputTokens?: number; outputTokens?: number; stopReason?: string; model?: string } = {},
): Record<string, unknown> {
  return {
    id: "msg_test",
    type: "message",
    role: "assistant",
    model: options.model ?? "claude-3-5-haiku-latest",
    content: [{ type: "text", text }],
    stop_reason: options.stopReason ?? "end_turn",
    stop_sequence: null,
    usage: { input_tokens: options.inputTokens ?? 1000, output_tokens: options.outputTokens ?? 200 },
  };
}

/** An Anthropic error body (`{ type: "error", error: { type, message } }`). */
export function anthropicErrorBody(message: string, type = "api_error"): Record<string, unknown> {
  return { type: "error", error: { type, message } };
}
