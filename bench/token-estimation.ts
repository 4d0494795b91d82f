/**
 * Token estimation: the default chars/4 against an exact tokenizer (o200k_base via gpt-tokenizer,
 * what `createTokenCounter` loads for GPT-4o-family models) on the LoCoMo conversations: error
 * per message and over whole transcripts, and the speed of both.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * **Setup.** The 1,451 message texts of the three LoCoMo conversations (187 KB) are counted two ways:
 * with chars/4 (`estimateTokens`, `Math.ceil(length / 4)`) and with o200k_base (gpt-tokenizer, loaded
 * through `createTokenCounter("gpt-4o")`). The error is (chars/4 - exact) / exact. Speed is the best of
 * 3 passes on one core.
 */
import { charsPerTokenCounter, createTokenCounter, MESSAGE_OVERHEAD_TOKENS, type TokenCounter } from "../core/domain/tokens.js";
import type { BenchContext } from "./support/context.js";
import { conversationsOrBuiltIn } from "./support/generated-conversation.js";
import type { SectionResult, Target } from "./support/report.js";
import { delta, fmt, mean, median, pct, sum, times } from "./support/stats.js";

/** MB/s of counting every text `repeats` times (best of 3 passes). */
function speed(counter: TokenCounter, texts: readonly string[], bytes: number, repeats: number): number {
  let best = Number.POSITIVE_INFINITY;
  let sink = 0;
  for (let pass = 0; pass < 3; pass++) {
    const start = performance.now();
    for (let r = 0; r < repeats; r++) for (const t of texts) sink += counter.count(t);
    best = Math.min(best, performance.now() - start);
  }
  if (sink < 0) throw new Error("unreachable");
  return (bytes * repeats) / (1024 * 1024) / (best / 1000);
}

export async function runTokenEstimation(ctx: BenchContext): Promise<SectionResult> {
  const { conversations, locomo, source } = conversationsOrBuiltIn();
  if (!locomo) ctx.log(`token-estimation: ${source}`);
  const command = `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only token-estimation`;
  const importStart = performance.now();
  const exact = await createTokenCounter("gpt-4o");
  const importMs = performance.now() - importStart;
  if (!exact.exact || exact.encoding !== "o200k_base") throw new Error(`expected o200k_base, got ${exact.encoding}`);
  const estimate = charsPerTokenCounter;

  const texts = conversations.flatMap((c) => c.turns.map((t) => t.text)).filter((t) => t.length > 0);
  const bytes = sum(texts.map((t) => Buffer.byteLength(t, "utf8")));
  const perMessage = texts.map((t) => {
    const e = estimate.count(t);
    const x = exact.count(t);
    return { e, x, error: (e - x) / x };
  });
  const withOverhead = texts.map((t) => {
    // The service's per-message estimate adds MESSAGE_OVERHEAD_TOKENS for the chat framing.
    const e = estimate.count(t) + MESSAGE_OVERHEAD_TOKENS;
    const x = exact.count(t) + MESSAGE_OVERHEAD_TOKENS;
    return (e - x) / x;
  });
  const transcripts = conversations.map((c) => {
    const text = c.turns.map((t) => `${t.speaker}: ${t.text}`).join("\n");
    const e = estimate.count(text);
    const x = exact.count(text);
    return { id: c.id, chars: text.length, e, x, error: (e - x) / x };
  });

  const repeatsExact = ctx.quick ? 1 : 3;
  const exactSpeed = speed(exact, texts, bytes, repeatsExact);
  const estimateSpeed = speed(estimate, texts, bytes, ctx.quick ? 200 : 1000);
  const signed = mean(perMessage.map((m) => m.error));
  const abs = mean(perMessage.map((m) => Math.abs(m.error)));
  const totalE = sum(perMessage.map((m) => m.e));
  const totalX = sum(perMessage.map((m) => m.x));
  const under = perMessage.filter((m) => m.e < m.x).length / perMessage.length;

  // There is no accuracy target; what matters for the service is the direction of the error.
  const targets: Target[] = [];

  return {
    id: "token-estimation",
    title: "Token estimation: chars/4 vs o200k_base (gpt-tokenizer)",
    command,
    tables: [
      {
        title: `Accuracy on ${fmt(texts.length)} ${locomo ? "LoCoMo" : "built-in (generated)"} messages (${fmt(bytes / 1024, 0)} KB)`,
        columns: ["measure", "chars/4 vs o200k_base"],
        rows: [
          ["mean error per message (signed)", delta(signed)],
          ["mean absolute error per message", pct(abs)],
          ["median absolute error per message", pct(median(perMessage.map((m) => Math.abs(m.error))))],
          ["mean absolute error incl. 4-token message overhead", pct(mean(withOverhead.map(Math.abs)))],
          ["messages underestimated", pct(under)],
          ["sum over all messages", `${fmt(totalE)} vs ${fmt(totalX)} (${delta(totalE / totalX - 1)})`],
          ...transcripts.map((t) => [`${t.id} transcript ("speaker: text" lines)`, `${fmt(t.e)} vs ${fmt(t.x)} (${delta(t.error)})`]),
        ],
      },
      {
        title: "Speed (one core, best of 3 passes)",
        columns: ["counter", "MB/s", "relative", "load"],
        rows: [
          ["chars/4", fmt(estimateSpeed, 0), times(estimateSpeed / exactSpeed, 0), "none"],
          ["o200k_base (gpt-tokenizer)", fmt(exactSpeed, 2), "1x", `${fmt(importMs, 0)} ms (dynamic import of the BPE tables)`],
        ],
      },
    ],
    targets,
    notes: [
      `Conversations: ${source}.`,
      "Errors are (chars/4 - exact) / exact. chars/4 is `Math.ceil(text.length / 4)` (core/domain/tokens.ts estimateTokens); the exact counter is createTokenCounter(\"gpt-4o\").",
      "A positive error is an overestimate: chars/4 then reports a fuller window than the model sees, so compaction triggers early (safe, but it spends summarizer calls sooner than needed).",
    ],
    data: { messages: texts.length, bytes, signed, abs, totalE, totalX, transcripts, exactSpeed, estimateSpeed, importMs },
  };
}
