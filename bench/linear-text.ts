/**
 * Linear text handling (docs/reliability.md, "Linear time on any input"): the worst case of each
 * function over user text at 2 KiB and at 256 KiB, over every adversarial input of
 * bench/support/user-text.ts (the ones the linear-time property test feeds them), and folds of a
 * process holding one large message: the fold's text work at 2 KiB and 256 KiB, and the real
 * fold (`compactIfNeeded`, force HARD, offline summarizer, DynamoDB Local) up to the largest
 * message the store holds.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * - **Worst case per function.** Every function over user text, on each of the 51 adversarial
 *   inputs of `bench/support/user-text.ts` (the ones the linear-time property test feeds them:
 *   each pattern's worst case, runs without a match, repeated separators, minified code, JSON,
 *   base64, chat), in CPU ms per call (a mean over calls filling 2 ms; with `--full` the fastest of
 *   3 such means); the table gives the slowest input at each
 *   size. A function whose input the service bounds (a model's rating answer, a message the
 *   strength analyzer rates) is measured at that bound.
 * - **Folds holding one large message.** A process of 27 messages (a pinned first one, 20 chat
 *   messages, one large TOOL message, the 5 of the HARD anchor). The fold's *text work* (the
 *   offline summary at a 4,000-token budget, the required units, the loss report and provenance,
 *   and the prompt an LLM summarizer would get) in CPU ms, and the *real fold* (`compactIfNeeded`,
 *   force HARD, offline summarizer, DynamoDB Local) in wall ms, median of 3. DynamoDB refuses an
 *   item with more than about 200,000 characters of content (the replay index holds a copy), so the
 *   real fold stops at 192 KiB; the text work runs at 256 KiB too.
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { META_SK, processPk } from "../core/adapters/dynamodb/keys.js";
import { createOfflineSummarizer } from "../core/adapters/llm/offline-summarizer.js";
import type { Message } from "../core/domain/model.js";
import { importantUnits } from "../core/domain/salient-units.js";
import { answerTokenLimit, buildSummaryPrompt, promptTokenCeiling } from "../core/domain/summary-prompt.js";
import { compactIfNeeded } from "../core/services/compaction/compaction.js";
import { isImportant } from "../core/services/compaction/loss-fields.js";
import { ledgerOfFold, summaryFields } from "../core/services/compaction/summary-fields.js";
import { DEFAULT_TUNABLES } from "../core/domain/tunables.js";
import { type BenchContext, bySize, envInt, envInts, requireEndpoint } from "./support/context.js";
import { batchPut, freshTable, type BenchTable } from "./support/dynamo.js";
import type { SectionResult, Target } from "./support/report.js";
import { benchDeps, idFactory, makeMessage, messageItem, observedStore, prng, syntheticText } from "./support/service.js";
import { fmt, median, ms, times } from "./support/stats.js";
import { cpuMsPerCall, FAMILIES, FUNCTIONS, KIB, type Gen, type TextFunction } from "./support/user-text.js";

/** Milliseconds of CPU per call (repeated until 2 ms have passed), the fastest of `runs`. */
function cpuPerCall(f: (text: string) => unknown, text: string, runs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < runs; r++) {
    best = Math.min(best, cpuMsPerCall(f, text));
  }
  return best;
}

interface Worst {
  ms: number;
  input: string;
}

interface FunctionRow {
  name: string;
  sizes: number[];
  worst: Worst[];
}

/** Each adversarial input is built once per size and fed to every function. */
const inputs = new Map<string, string>();
const inputOf = (family: string, gen: Gen, n: number) => {
  const key = `${family}@${n}`;
  let text = inputs.get(key);
  if (text === undefined) inputs.set(key, (text = gen(n)));
  return text;
};

function worstCases(fn: TextFunction, sizes: number[], runs: number, log: (m: string) => void): FunctionRow {
  const capped = sizes.map((n) => Math.min(n, fn.max ?? n));
  const worst = capped.map(() => ({ ms: 0, input: "" }));
  for (const [input, gen] of Object.entries(FAMILIES) as Array<[string, Gen]>) {
    fn.f(inputOf(input, gen, capped[0]!)); // warm-up
    capped.forEach((n, i) => {
      const t = cpuPerCall(fn.f, inputOf(input, gen, n), runs);
      if (t > worst[i]!.ms) worst[i] = { ms: t, input };
    });
  }
  log(`linear-text: ${fn.name}: ${worst.map((w, i) => `${ms(w.ms)} at ${capped[i]! / KIB} KiB`).join(", ")}`);
  return { name: fn.name, sizes: capped, worst };
}

// ---- a real fold holding one large message -------------------------------------------------------

/** What the large message is made of. */
const FOLD_CONTENTS: Record<string, Gen> = {
  '"a-" repeated': FAMILIES["a- repeated"]!,
  "chat with units": FAMILIES["chat"]!,
  "minified code": FAMILIES["minified code"]!,
  "short sentences": (n) => {
    const parts: string[] = [];
    let length = 0;
    for (let i = 0; length < n; i++) {
      const s = `Item ${i} costs ${i * 7} euros.`;
      parts.push(s);
      length += s.length + 1;
    }
    return parts.join(" ").slice(0, n);
  },
};

/** Messages around the large one: a pinned first one, chat before it, and the HARD anchor after. */
const CHAT_BEFORE = 20;
const ANCHOR = 5;

/** The process's messages: a pinned first one, chat, the large TOOL message, then the HARD anchor. */
function foldMessages(processId: string, large: string): Message[] {
  const key = { tenantId: "bench", processId };
  const rand = prng(7);
  const msgId = idFactory("msg");
  let clock = Date.UTC(2025, 0, 1);
  const tick = () => new Date((clock += 60_000));
  const messages: Message[] = [];
  const total = 1 + CHAT_BEFORE + 1 + ANCHOR;
  for (let i = 0; i < total; i++) {
    const at = tick();
    const isLarge = i === 1 + CHAT_BEFORE;
    const role = isLarge ? "TOOL" : i === total - 1 || i % 2 === 0 ? "USER" : "ASSISTANT";
    const text = isLarge ? large : syntheticText(rand, role === "USER" ? 250 : 900);
    messages.push(makeMessage(key, msgId(at), at, role, text, { tags: i === 0 ? ["STRENGTH:pinned"] : [] }));
  }
  return messages;
}

async function seedProcess(t: BenchTable, processId: string, large: string): Promise<void> {
  const key = { tenantId: "bench", processId };
  const { store } = observedStore(t);
  await t.recorder.quietly(() => store.upsertProcess(key.tenantId, { processId, projectId: "bench" }, "2025-01-01T00:00:00.000Z"));
  const messages = foldMessages(processId, large);
  await batchPut(t, messages.map((m) => messageItem(key, m)));
  await t.recorder.quietly(() =>
    t.client.send(
      new UpdateCommand({
        TableName: t.tableName,
        Key: { pk: processPk(key), sk: META_SK },
        UpdateExpression: "SET version = :v, firstUserMessageId = :u",
        ExpressionAttributeValues: { ":v": 1, ":u": messages[0]!.id },
      }),
    ),
  );
}

/** Summary budget of the text work below: the largest a tenant may set (the most lines to select). */
const SUMMARY_TOKENS = 4_000;

/**
 * The text work of one fold, without I/O: the offline summary, the units the summary must keep,
 * the loss report and provenance, and the prompt an LLM summarizer would get for the same fold.
 */
async function foldTextWork(messages: readonly Message[]): Promise<void> {
  const fold = messages.slice(0, messages.length - ANCHOR);
  const input = {
    priorSummary: null,
    messages: fold.map((m) => ({ id: m.id, role: m.role, content: m.content, createdAt: m.createdAt, important: isImportant(m) })),
    maxSummaryTokens: SUMMARY_TOKENS,
  };
  const outcome = await createOfflineSummarizer().summarize(input);
  if (!outcome.ok) throw new Error(outcome.failure.message);
  const required = importantUnits(input.messages, 25);
  const ledger = ledgerOfFold(null, fold, { tunables: DEFAULT_TUNABLES, contextWindow: 200_000 });
  summaryFields({ priorDetail: null, required, ...ledger }, fold, { ok: true, text: outcome.summary, calls: 1, carried: new Map(), ...(outcome.citations ? { citations: outcome.citations } : {}) });
  buildSummaryPrompt(input, { maxSummaryTokens: SUMMARY_TOKENS, maxInputTokens: promptTokenCeiling(200_000, answerTokenLimit(SUMMARY_TOKENS)), citations: true });
}

/** Milliseconds of CPU of the fold's text work, the fastest of `runs`. */
async function textWorkMs(messages: readonly Message[], runs: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < runs; r++) {
    const start = process.cpuUsage();
    await foldTextWork(messages);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

interface FoldRow {
  content: string;
  chars: number;
  /** Wall time of the real fold (median), or null at a size the store cannot hold. */
  foldMs: number | null;
  folded: number;
  /** CPU of the fold's text work (fastest run). */
  textMs: number;
}

/** Largest message content DynamoDB stores today with the replay index's copy: about 200,000 characters. */
const LARGEST_STORED = 192 * KIB;

export async function runLinearText(ctx: BenchContext): Promise<SectionResult> {
  const sizes = envInts("BENCH_TEXT_SIZES", [2 * KIB, 256 * KIB]);
  // Each figure is already a mean over calls that fill 2 ms of CPU; --full takes the best of 3.
  const runs = envInt("BENCH_TEXT_RUNS", bySize(ctx, { quick: 1, normal: 1, full: 3 }));
  const only = process.env.BENCH_TEXT_FUNCTIONS?.split(",").map((s) => s.trim());
  const functions = FUNCTIONS.filter((f) => !only || only.includes(f.name));

  const rows = functions.map((fn) => worstCases(fn, sizes, runs, ctx.log));

  // Folds of a process holding one large message: the text work at every size, and the real
  // service over DynamoDB Local at the sizes the store holds.
  const endpoint = requireEndpoint(ctx);
  const t = await freshTable(endpoint, "text");
  const { store } = observedStore(t);
  const deps = benchDeps({ store });
  const foldSizes = envInts("BENCH_TEXT_FOLD_SIZES", [2 * KIB, LARGEST_STORED, 256 * KIB]);
  const foldRuns = envInt("BENCH_TEXT_FOLD_RUNS", ctx.quick ? 1 : 3);
  const folds: FoldRow[] = [];
  let seeded = 0;
  await seedProcess(t, "warm-up", "warm up");
  await compactIfNeeded(deps, { tenantId: "bench", processId: "warm-up" }, { model: { contextWindow: 200_000 }, force: "HARD" });
  for (const [content, gen] of Object.entries(FOLD_CONTENTS)) {
    for (const chars of foldSizes) {
      const large = gen(chars);
      const textMs = await textWorkMs(foldMessages("text-work", large), foldRuns);
      const samples: number[] = [];
      let folded = 0;
      for (let r = 0; r < foldRuns && chars <= LARGEST_STORED; r++) {
        const processId = `fold-${seeded++}`;
        await seedProcess(t, processId, large);
        const start = performance.now();
        const result = await compactIfNeeded(deps, { tenantId: "bench", processId }, { model: { contextWindow: 200_000 }, force: "HARD" });
        samples.push(performance.now() - start);
        if (!result.compacted) throw new Error(`the fold of ${content} at ${chars} chars did not compact: ${result.reason ?? "no reason"}`);
        folded = result.compactedMessages;
      }
      const foldMs = samples.length > 0 ? median(samples) : null;
      folds.push({ content, chars, foldMs, folded, textMs });
      ctx.log(`linear-text: ${content} at ${fmt(chars)} chars: text work ${ms(textMs)}${foldMs === null ? "" : `, real fold ${ms(foldMs)}`}`);
    }
  }

  const small = (r: FunctionRow) => r.worst[0]!;
  const large = (r: FunctionRow) => r.worst[r.worst.length - 1]!;
  const growthOf = (r: FunctionRow) => large(r).ms / small(r).ms;
  const inputGrowth = (r: FunctionRow) => r.sizes[r.sizes.length - 1]! / r.sizes[0]!;
  const excess = (r: FunctionRow) => growthOf(r) / inputGrowth(r);
  const worstGrowth = rows.reduce((a, r) => (excess(r) > excess(a) ? r : a), rows[0]!);
  const foldsOf = (content: string) => folds.filter((x) => x.content === content);
  const realRatio = (content: string) => {
    const real = foldsOf(content).filter((f) => f.foldMs !== null);
    return real[real.length - 1]!.foldMs! / real[0]!.foldMs!;
  };
  const textWorkAtTop = Math.max(...folds.filter((f) => f.chars === foldSizes[foldSizes.length - 1]).map((f) => f.textMs));
  const smallestFold = Math.min(...folds.filter((f) => f.chars === foldSizes[0] && f.foldMs !== null).map((f) => f.foldMs!));
  const targets: Target[] = [
    {
      name: `worst case per function: time growth / input growth, ${sizes[0]! / KIB} KiB -> ${sizes[sizes.length - 1]! / KIB} KiB`,
      target: "<= 10 (linear: about 1)",
      measured: `${times(excess(worstGrowth))} (${worstGrowth.name})`,
      met: excess(worstGrowth) <= 10,
    },
    {
      name: `real fold holding a ${fmt(Math.min(LARGEST_STORED, foldSizes[foldSizes.length - 1]!))}-char message vs a ${fmt(foldSizes[0]!)}-char one`,
      target: "same time class: <= 5x",
      measured: Object.keys(FOLD_CONTENTS).map((c) => `${c} ${times(realRatio(c))}`).join(", "),
      met: Object.keys(FOLD_CONTENTS).every((c) => realRatio(c) <= 5),
    },
    {
      name: `a fold's text work with a ${fmt(foldSizes[foldSizes.length - 1]! / KIB)} KiB message (slowest content) vs a whole real fold with a ${fmt(foldSizes[0]! / KIB)} KiB one`,
      target: "below it",
      measured: `${ms(textWorkAtTop)} vs ${ms(smallestFold)}`,
      met: textWorkAtTop < smallestFold,
    },
  ];

  return {
    id: "linear-text",
    title: "Linear text handling: worst case per function, and folds holding one large message",
    command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only linear-text`,
    tables: [
      {
        title: `Worst case per function over ${Object.keys(FAMILIES).length} adversarial inputs (CPU ms per call, fastest of ${runs})`,
        columns: ["function", ...sizes.map((n) => `worst at ${n / KIB} KiB`), `its input at ${sizes[sizes.length - 1]! / KIB} KiB`, "time growth", "input growth"],
        rows: rows.map((r) => [
          r.name,
          ...r.worst.map((w, i) => `${ms(w.ms)}${r.sizes[i] !== sizes[i] ? ` (at ${fmt(r.sizes[i]! / KIB, 1)} KiB)` : ""}`),
          large(r).input,
          times(growthOf(r)),
          times(inputGrowth(r), 0),
        ]),
      },
      {
        title: `Folds of ${1 + CHAT_BEFORE + 1 + ANCHOR} messages, one of them large: the text work (CPU, fastest of ${foldRuns}) and the real compactIfNeeded (force HARD, offline summarizer, DynamoDB Local; median of ${foldRuns})`,
        columns: ["large message", ...foldSizes.flatMap((n) => [`text work, ${fmt(n / KIB)} KiB`, `real fold, ${fmt(n / KIB)} KiB`]), "real fold ratio"],
        rows: Object.keys(FOLD_CONTENTS).map((content) => [
          content,
          ...foldsOf(content).flatMap((f) => [ms(f.textMs), f.foldMs === null ? "not storable" : ms(f.foldMs)]),
          times(realRatio(content)),
        ]),
      },
    ],
    targets,
    notes: [
      "Worst case: for each function, the slowest of the adversarial inputs at each size (bench/support/user-text.ts, shared with test/unit/linear-time.property.test.ts). A function whose input the service bounds below 256 KiB (a model's rating answer, a message the strength analyzer rates) is measured at that bound.",
      `Folds: a pinned first message, ${CHAT_BEFORE} chat messages, the large TOOL message and ${ANCHOR} anchor messages. Text work: the offline summary (${fmt(SUMMARY_TOKENS)}-token budget), the required units, the loss report and provenance (summaryFields) and the prompt an LLM summarizer would get. The real fold seeds the messages with BatchWriteItem and runs the service; DynamoDB refuses an item with more than about 200,000 characters of content (the replay index holds a copy), so the real fold stops at ${fmt(LARGEST_STORED)} characters.`,
    ],
    data: { rows, folds },
  };
}
