/**
 * One engine session for the background compaction benchmark (bench/background-compaction.ts):
 * turns driven one by one through `runTurn` of the given service code, the summarizer the real
 * OpenAI adapter against a local wire server that answers after a fixed delay, and the compaction
 * worker run in process, outside the turns' async context, as its own Lambda would.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { CompactionResult } from "../../core/domain/compaction-result.js";
import type { DomainEvent } from "../../core/ports/events.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { chatCompletionBody, startLlmWireServer, type LlmWireServer } from "../../tools/llm-wire-server.js";
import { type CacheKey, isCacheStable } from "./cache-stability.js";
import { freshTable } from "./dynamo.js";
import type { LocomoConversation } from "./locomo.js";
import { prng, syntheticText } from "./service.js";
import type { ServiceCode } from "./service-code.js";

/** The n-th answer: numbered, so that every fold's summary changes the memory block as a real one would. */
const summary = (n: number) =>
  `<summary>Summary ${n}. ${"The team moved the deploy to Friday, restored the dropped column, and owes Maria the rollback plan. ".repeat(6)}</summary>`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A wire server whose every chat completion answers a summary after `delayMs`. */
export async function slowModel(delayMs: number): Promise<LlmWireServer> {
  const server = await startLlmWireServer();
  let answers = 0;
  server.setFallback(() => ({ delayMs, body: chatCompletionBody(summary(++answers), { promptTokens: 1000, completionTokens: 200 }) }));
  return server;
}

export const wireSummarizerOptions = (server: LlmWireServer) => ({
  baseURL: `${server.url}/v1`,
  apiKey: "bench",
  model: "gpt-4o-mini",
  retry: { maxAttempts: 1, attemptTimeoutMs: 60_000, deadlineMs: 120_000 },
});

export interface TurnSample {
  ms: number;
  /** The turn committed a fold. */
  compacted: boolean;
  /** TOOL results the turn cleared. */
  cleared: number;
  /** Messages the answer left out while a fold was pending. */
  trimmed: number;
  /** The prompt the answer lets the engine build, in the service's estimate, against the window. */
  returnedTokens: number;
  /** A summarizer call ran inside the turn's async context. */
  waited: boolean;
  /** The answer kept the previous answer's cached prefix (bench/support/cache-stability.ts). */
  stable: boolean;
  /** Counted in the cache-stable share: not the first turn, and no fold committed or result cleared since the previous answer. */
  counted: boolean;
}

export interface SessionRun {
  /** "synthetic", or the LoCoMo conversation's id. */
  conversation: string;
  /** Which service code ran: "after" (this tree) or "before" (the baseline). */
  code: string;
  mode: "inline" | "background";
  window: number;
  delayMs: number;
  turns: TurnSample[];
  /** Summarizer calls made while a turn was in progress (its own async context), and by the worker. */
  callsInTurns: number;
  callsInWorker: number;
  preparedUsed: number;
  preparedDiscarded: number;
}

export interface SessionOptions {
  mode: "inline" | "background";
  window: number;
  delayMs: number;
  turns: number;
  pauseMs: number;
  conversation?: LocomoConversation;
}

/** The text of each turn: a USER message and the ASSISTANT reply. */
type Script = (i: number) => { user: string; reply: string };

/** Synthetic messages of ~1/70 of the window each, so every window sees several folds. */
function syntheticScript(window: number, delayMs: number): Script {
  const rand = prng(window + delayMs);
  const chars = Math.round((window / 70) * 4);
  return () => ({ user: syntheticText(rand, chars), reply: syntheticText(rand, chars) });
}

/** A LoCoMo conversation, one speaker as the user and the other as the assistant, turn by turn. */
function locomoScript(c: LocomoConversation): Script {
  const said = (t: LocomoConversation["turns"][number] | undefined) => (t ? (t.caption ? `${t.text} [shares a photo: ${t.caption}]` : t.text) : "…");
  return (i) => ({ user: said(c.turns[2 * i]), reply: said(c.turns[2 * i + 1]) });
}

/** Wall-clock spans (performance.now) of the worker's jobs. */
type Span = { start: number; end: number };
const overlaps = (spans: readonly Span[], from: number, to: number) => spans.some((s) => s.start <= to && s.end >= from);

/**
 * One engine session: every turn appends a USER message, asks for the turn (timed), pauses like an
 * engine calling its model, then appends the ASSISTANT reply.
 */
export async function runSession(code: ServiceCode, endpoint: string, o: SessionOptions): Promise<SessionRun> {
  const name = o.conversation?.id ?? "synthetic";
  const server = await slowModel(o.delayMs);
  const t = await freshTable(endpoint, `bg-${code.label}-${name}-${o.mode}-${o.window}-${o.delayMs}`);
  // The index of the turn in progress, in the turn's async context.
  const inTurn = new AsyncLocalStorage<number>();
  const waitedTurns = new Set<number>();
  let callsInWorker = 0;
  let callsInTurns = 0;
  const real = code.createOpenAISummarizer(wireSummarizerOptions(server));
  const summarizer: Summarizer = {
    ...real,
    summarize: (input) => {
      const turn = inTurn.getStore();
      if (turn === undefined) callsInWorker++;
      else {
        callsInTurns++;
        waitedTurns.add(turn);
      }
      return real.summarize(input);
    },
  };
  const queue: DomainEvent[] = [];
  const metrics = code.createRecordingMetrics();
  const deps = code.createDeps({
    env: { COMPACTION_EXECUTION: o.mode },
    store: code.createDynamoStore({ client: t.client, tableName: t.tableName }),
    log: code.silentLog,
    metrics,
    // The worker runs outside the turn's async context, as its own Lambda would.
    events: { publish: async (e) => void queue.push(e) },
    summarizerFactory: async () => summarizer,
  });
  let running = true;
  const jobs = new Set<Promise<unknown>>();
  const spans: Span[] = [];
  const worker = inTurn.exit(async () => {
    while (running || queue.length > 0 || jobs.size > 0) {
      const next = queue.shift();
      if (next?.detailType === "CompactionRequested") {
        const span = { start: performance.now(), end: Number.POSITIVE_INFINITY };
        spans.push(span);
        const job = code
          .handleCompactionRequested(deps, next.detail)
          .catch(() => {})
          .finally(() => {
            span.end = performance.now();
            jobs.delete(job);
          });
        jobs.add(job);
      }
      await sleep(20);
    }
  });

  const key = { tenantId: "bench", processId: `session-${code.label}-${name}-${o.mode}-${o.window}-${o.delayMs}` };
  await code.upsertProcess(deps, key.tenantId, key.processId, { projectId: "bench" });
  const script = o.conversation ? locomoScript(o.conversation) : syntheticScript(o.window, o.delayMs);
  await code.appendMessage(deps, key, { role: "USER", content: "Keep the release on track and tell me what is blocking it." });
  const samples: TurnSample[] = [];
  const at: Span[] = [];
  const changed: boolean[] = [];
  let previous: CacheKey | undefined;
  for (let i = 0; i < o.turns; i++) {
    const { user, reply } = script(i);
    const started = performance.now();
    const out = await inTurn.run(i, () => code.runTurn(deps, key, { message: { role: "USER", content: user }, model: { contextWindow: o.window } }));
    const ended = performance.now();
    at.push({ start: started, end: ended });
    const c: CompactionResult = out.compaction;
    const prefix: CacheKey = { memoryStatic: out.context.staticBlock ?? "", messageIds: out.messages.map((m) => m.id) };
    changed.push(previous !== undefined && previous.memoryStatic !== prefix.memoryStatic);
    samples.push({
      ms: ended - started,
      compacted: c.compacted,
      cleared: c.clearedMessages ?? 0,
      trimmed: c.trimmed?.messages ?? 0,
      returnedTokens: code.estimateTokens(out.context.block) + out.messages.reduce((n, m) => n + m.tokens, 0),
      waited: false,
      stable: previous !== undefined && isCacheStable(previous, prefix),
      counted: false,
    });
    previous = prefix;
    await sleep(o.pauseMs);
    await code.appendMessage(deps, key, { role: "ASSISTANT", content: reply });
  }
  running = false;
  await worker;
  await server.close();
  samples.forEach((s, i) => {
    s.waited = waitedTurns.has(i);
    // A fold the worker committed between the two answers moves the summary as a turn's commit
    // does: such a turn does not count either (its summary changed while a worker job ran).
    const workerCommit = i > 0 && changed[i]! && overlaps(spans, at[i - 1]!.start, at[i]!.end);
    s.counted = i > 0 && !s.compacted && s.cleared === 0 && !workerCommit;
  });
  const prepared: readonly string[] = metrics.prepared ?? [];
  return {
    conversation: name,
    code: code.label,
    mode: o.mode,
    window: o.window,
    delayMs: o.delayMs,
    turns: samples,
    callsInTurns,
    callsInWorker,
    preparedUsed: prepared.filter((p) => p === "used").length,
    preparedDiscarded: prepared.filter((p) => p !== "used").length,
  };
}
