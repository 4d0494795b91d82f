/**
 * Service-written against provider-written folds (docs/summarizers.md, "Provider folds"), on the
 * same agent session against the provider emulator and DynamoDB Local.
 *
 * Method: one USER message, then `steps` tool steps of a Claude engine with thinking (emulated,
 * signed blocks), a manual HARD fold every 30 steps. The engine asks with
 * `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`, so a changed prefix costs the
 * kept thinking instead of a 400, and the emulator counts what it verified and dropped.
 *
 * - **service**: the service's own summarizer (the OpenAI one, over the emulator's Chat
 *   Completions) writes each fold; after a fold the engine takes the turn's `request` in the
 *   Anthropic format (the readable chain in `system`, the kept turns after it).
 * - **anthropic-compaction**: Anthropic's on-demand compaction writes each fold; after a fold the
 *   engine sends the memory's block first, then the active messages it does not stand for.
 *
 * Per kind: prefix changes per fold (requests whose `system` or earlier messages differ from the
 * previous request's), the kept thinking the first request after each fold verified or dropped,
 * summarizer calls and tokens, fold latency (`summarizerMs`), and the fidelity of the readable
 * chain (the salient units of the folded messages its summaries still carry).
 */
import Anthropic from "@anthropic-ai/sdk";
import { createAnthropicCompactionSummarizer } from "../core/adapters/llm/anthropic-compaction.js";
import { createOpenAISummarizer } from "../core/adapters/llm/openai-summarizer.js";
import { silentLog } from "../core/adapters/log.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../core/composition/create-deps.js";
import type { Memory } from "../core/domain/model.js";
import type { Summarizer } from "../core/ports/summarizer.js";
import { compactManually } from "../core/services/compaction/manual-compaction.js";
import { appendMessage, listMessages } from "../core/services/messages.js";
import { upsertProcess } from "../core/services/processes.js";
import { runTurn } from "../core/services/turn.js";
import { startProviderEmulator, type ProviderEmulator } from "../tools/provider-emulator/provider-emulator.js";
import { type BenchContext, bySize, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import { observedStore } from "./support/service.js";
import { AppendMessageBody } from "../core/adapters/http/schemas.js";
import type { SectionResult } from "./support/report.js";
import { fmt } from "./support/stats.js";

const MODEL = "claude-fable-5-1";
const FOLD_EVERY = 30;
const system = "You read code.";
const tools = [{ name: "read_file", input_schema: { type: "object" as const, properties: { path: { type: "string" } } } }];

interface Kind {
  name: "service" | "anthropic-compaction";
  summarizer(emulator: ProviderEmulator): Summarizer;
}
const KINDS: Kind[] = [
  { name: "service", summarizer: (e) => createOpenAISummarizer({ apiKey: "k", baseURL: `${e.url}/v1`, model: "gpt-5" }) },
  { name: "anthropic-compaction", summarizer: (e) => createAnthropicCompactionSummarizer({ apiKey: "k", baseURL: e.url, model: MODEL }) },
];

interface KindResult {
  kind: string;
  folds: number;
  /** Folds a request followed (the last step's fold has none). */
  followed: number;
  requests: number;
  prefixChanges: number;
  keptVerified: number;
  keptDropped: number;
  errors: number;
  summarizerCalls: number;
  tokens: number;
  foldMs: number[];
  units: number;
  unitsKept: number;
}

export async function runProviderFolds(ctx: BenchContext): Promise<SectionResult> {
  const steps = bySize(ctx, { quick: 60, normal: 150, full: 300 });
  const emulator = await startProviderEmulator();
  const results: KindResult[] = [];
  try {
    for (const [i, kind] of KINDS.entries()) {
      ctx.log(`provider-folds: ${kind.name}, ${steps} steps`);
      results.push(await runKind(ctx, emulator, kind, steps, i));
    }
  } finally {
    await emulator.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return {
    id: "provider-folds",
    title: "Service-written and provider-written folds on the same session (provider emulator, DynamoDB Local)",
    command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only provider-folds`,
    tables: [
      {
        title: `${steps} tool steps of a Claude engine with thinking, a HARD fold every ${FOLD_EVERY} steps`,
        columns: ["fold written by", "folds", "prefix changes / fold", "kept thinking after folds (verified / dropped)", "errors", "summarizer calls", "summarizer tokens", "fold latency p50 / max (ms)", "readable chain: units kept"],
        rows: results.map((r) => [
          r.kind,
          String(r.folds),
          (r.prefixChanges / Math.max(1, r.followed)).toFixed(2),
          `${r.keptVerified} / ${r.keptDropped}`,
          String(r.errors),
          String(r.summarizerCalls),
          fmt(r.tokens),
          `${median(r.foldMs)} / ${Math.max(0, ...r.foldMs)}`,
          r.units > 0 ? `${((100 * r.unitsKept) / r.units).toFixed(1)}% of ${fmt(r.units)}` : "-",
        ]),
      },
    ],
    targets: results.map((r) => ({
      name: `${r.kind}: requests refused`,
      target: "0",
      measured: String(r.errors),
      met: r.errors === 0,
    })),
    notes: [
      "The emulator's summaries are extractive (each message's text cut to 240 characters), and the service's summarizer reads the emulator's Chat Completions answer: the fidelity column compares the two chains' loss reports, not two models.",
    ],
    data: results,
  };
}

async function runKind(ctx: BenchContext, emulator: ProviderEmulator, kind: Kind, steps: number, run: number): Promise<KindResult> {
  const t = await freshTable(requireEndpoint(ctx), `pfold${run}`);
  const summarizer = kind.summarizer(emulator);
  const deps = createDeps({ env: { COMPACTION_EXECUTION: "inline" }, store: observedStore(t).store, log: silentLog, metrics: createRecordingMetrics(), events: { publish: async () => {} }, summarizerFactory: async () => summarizer });
  const tenantId = "bench";
  const key = { tenantId, processId: `pfold-${run}` };
  await upsertProcess(deps, tenantId, key.processId, { projectId: "bench", conversation: { system, tools } });
  // Each message as `POST .../messages` reads it (the native checks and the projection).
  const append = (body: unknown) => appendMessage(deps, key, AppendMessageBody.parse(body));
  await append({ role: "USER", native: { format: "anthropic", content: [{ type: "text", text: "Read every file of src/ and report." }] } });
  const anthropic = new Anthropic({ apiKey: "k", baseURL: emulator.url, maxRetries: 0 });
  const model = { name: MODEL, contextWindow: 1_000_000 };
  let request: { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] } = { system: [{ type: "text", text: system }], messages: [] };
  request.messages = (await listMessages(deps, key, { view: "active", limit: 1000 })).items.map((m) => ({ role: "user", content: m.native!.content as Anthropic.ContentBlockParam[] }));
  const first = emulator.records.length;
  let previous: string[] | null = null;
  let prefixChanges = 0;
  let folds = 0;
  const afterFold: number[] = [];
  for (let step = 1; step <= steps; step++) {
    // What the model sees before the new turn: system, then every message but the last.
    const seen = [JSON.stringify(request.system), ...request.messages.slice(0, -1).map((m) => JSON.stringify(m))];
    if (previous && seen.slice(0, previous.length).some((s, i) => s !== previous![i])) prefixChanges++;
    previous = [JSON.stringify(request.system), ...request.messages.map((m) => JSON.stringify(m))];
    const id = `toolu_${run}_${step}`;
    emulator.anthropic.script({ thinking: `Step ${step}: read the next file.`, toolUses: [{ id, name: "read_file", input: { path: `src/f${step}.ts` } }] });
    const reply = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 4096,
      thinking: { type: "enabled", budget_tokens: 2048, block_binding: { prefix_mismatch_behavior: "drop_block" } } as Anthropic.ThinkingConfigParam,
      system: request.system,
      tools,
      messages: request.messages,
    });
    const result: Anthropic.ContentBlockParam[] = [{ type: "tool_result", tool_use_id: id, content: `src/f${step}.ts exports parse${step}() and reads config key k${step}` }];
    await append({ native: { format: "anthropic", content: reply.content } });
    await append({ role: "TOOL", native: { format: "anthropic", content: result } });
    request = { ...request, messages: [...request.messages, { role: "assistant", content: reply.content }, { role: "user", content: result }] };
    if (step % FOLD_EVERY === 0) {
      const folded = await compactManually(deps, key, { model, force: "HARD" });
      if (folded.result.compacted) folds++;
      request = await afterFoldRequest(deps, key, kind, model);
      afterFold.push(emulator.records.length);
    }
  }
  const records = emulator.records.slice(first).filter((r) => !r.compaction && r.provider === "anthropic");
  const firstAfter = afterFold.map((n) => emulator.records[n]).filter((r) => r !== undefined);
  const memories = (await deps.store.listMemories(key)).filter((m: Memory) => m.status === "OK");
  return {
    kind: kind.name,
    folds,
    followed: afterFold.filter((n) => n < emulator.records.length).length,
    requests: records.length,
    prefixChanges,
    keptVerified: firstAfter.reduce((n, r) => n + (r.thinking?.verified.length ?? 0), 0),
    keptDropped: firstAfter.reduce((n, r) => n + (r.thinking?.dropped.length ?? 0), 0),
    errors: emulator.records.slice(first).filter((r) => r.status !== 200).length,
    summarizerCalls: memories.reduce((n, m) => n + (m.metadata.summarizerCalls ?? 0), 0),
    tokens: memories.reduce((n, m) => n + (m.metadata.usage?.inputTokens ?? 0) + (m.metadata.usage?.outputTokens ?? 0), 0),
    foldMs: memories.map((m) => Math.round(m.metadata.summarizerMs ?? 0)),
    units: memories.reduce((n, m) => n + (m.metadata.loss?.units ?? 0), 0),
    unitsKept: memories.reduce((n, m) => n + (m.metadata.loss?.kept ?? 0), 0),
  };
}

/** The engine's request right after a fold: the turn's readable chain, or the block and the kept turns. */
async function afterFoldRequest(deps: ReturnType<typeof createDeps>, key: { tenantId: string; processId: string }, kind: Kind, model: { name: string; contextWindow: number }) {
  const own: Anthropic.TextBlockParam = { type: "text", text: system };
  if (kind.name === "service") {
    const turn = await runTurn(deps, key, { model, format: "anthropic" });
    const r = turn.request as unknown as { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] };
    return { system: [own, ...r.system], messages: r.messages };
  }
  const memory = (await deps.store.listMemories(key)).find((m) => m.status === "OK" && m.supersededAt === null);
  const covered = new Set(memory?.metadata.providerFold?.covered ?? []);
  const active = (await listMessages(deps, key, { view: "active", limit: 1000 })).items.filter((m) => !covered.has(m.id));
  const kept = active.map((m): Anthropic.MessageParam => ({ role: m.role === "ASSISTANT" ? "assistant" : "user", content: m.native!.content as Anthropic.ContentBlockParam[] }));
  return { system: [own], messages: memory?.native ? [{ role: "assistant" as const, content: memory.native.content as Anthropic.ContentBlockParam[] }, ...kept] : kept };
}
