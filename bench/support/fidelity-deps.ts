/**
 * The fidelity benchmark's service: folds in the turn, with the strength-analyzer variant and the
 * tunables the environment names for a comparison (docs/benchmarks.md, "Fidelity").
 */
import { createOfflineSummarizer } from "../../core/adapters/llm/offline-summarizer.js";
import type { Role } from "../../core/domain/model.js";
import { offlineStrength } from "../../core/domain/strength-analyzer.js";
import { CHARS_PER_TOKEN } from "../../core/domain/tokens.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { benchDeps } from "./service.js";
import type { ServiceCode } from "./service-code.js";

/**
 * The strength analyzer variant (`BENCH_STRENGTH`, docs/compaction.md "Strength analyzer"):
 * `none` (default), `side-channel` (offline rating on every append), `inline` (offline rating
 * before each HARD fold), `inline-model` (the batched model call before each HARD fold, answered by
 * a stub that applies the offline rules: no model runs offline here, so it measures the path, not
 * a model's judgement).
 */
type StrengthVariant = "none" | "side-channel" | "inline" | "inline-model";
export function strengthVariant(): StrengthVariant {
  const v = (process.env.BENCH_STRENGTH ?? "none").trim() as StrengthVariant;
  if (!["none", "side-channel", "inline", "inline-model"].includes(v)) throw new Error(`BENCH_STRENGTH: unknown variant '${v}'`);
  return v;
}

/** The offline summarizer plus a `complete` that rates the prompt's numbered messages with the offline rules. */
function withRatingStub(summarizer: Summarizer): Summarizer {
  return {
    ...summarizer,
    summarize: (input) => summarizer.summarize(input),
    async complete(request) {
      const lines = [...request.user.matchAll(/^#(\d+) (USER|ASSISTANT|SYSTEM): (.*)$/gm)];
      const text = lines.map(([, n, role, content]) => `#${n} ${offlineStrength({ role: role as Role, content: content! })}`).join("\n");
      return { ok: true, text, usage: { inputTokens: Math.ceil(request.user.length / CHARS_PER_TOKEN), outputTokens: lines.length * 4 } };
    },
  };
}

/** Deps folding in the turn, with the tunables the environment names for the comparison; `code`: another commit's service. */
export function depsFor(store: Parameters<typeof benchDeps>[0]["store"], clock: { now(): Date }, code?: ServiceCode) {
  const variant = strengthVariant();
  const offline = (code?.createOfflineSummarizer ?? createOfflineSummarizer)();
  return benchDeps({
    store,
    clock,
    ...(code ? { code } : {}),
    summarizer: variant === "inline-model" ? withRatingStub(offline) : offline,
    env: {
      // The replay measures what the folds keep: every turn folds itself, as without a worker.
      COMPACTION_EXECUTION: "inline",
      ...(process.env.RECALL_MAX_TOKENS ? { RECALL_MAX_TOKENS: process.env.RECALL_MAX_TOKENS } : {}),
      ...(process.env.COMPACTION_FOLD_MIN_ROOM_TOKENS ? { COMPACTION_FOLD_MIN_ROOM_TOKENS: process.env.COMPACTION_FOLD_MIN_ROOM_TOKENS } : {}),
      ...(variant === "side-channel" ? { STRENGTH_SIDE_CHANNEL_ENABLED: "true" } : {}),
      ...(variant === "inline" || variant === "inline-model" ? { STRENGTH_INLINE_ON_COMPACTION: "true" } : {}),
    },
  });
}
