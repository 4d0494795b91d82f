/**
 * Where the strength analyzer runs (docs/compaction.md, "Strength analyzer"): the side channel
 * rates an appended message in the append itself, offline (no model call on a turn's path); before
 * a HARD fold the active messages still without a caller's rating are rated in one batch, by the
 * summarizer's model when it is a remote one (in the worker when folds run in the background).
 * The analyzer's tags never move META.version (`retagMessage`), and a caller's tag always wins.
 * The side channel's rating is core/domain/strength-analyzer.ts's `sideChannelTags`.
 */
import type { Message } from "../domain/model.js";
import type { CompactionModeName, MemoryMetadata } from "../domain/model.js";
import { MODE_POLICY } from "../domain/mode-policy.js";
import { buildStrengthPrompt, parseStrengthAnswer } from "../domain/strength-analyzer-prompt.js";
import {
  analyzable,
  analyzedTags,
  offlineStrength,
  ratesMessage,
  type AnalyzedMessage,
  type AnalyzerName,
} from "../domain/strength-analyzer.js";
import type { Strength } from "../domain/strength.js";
import { SAFE_CHARS_PER_TOKEN, SUMMARIZER_PROMPT_RESERVE_TOKENS } from "../domain/summarizer-fit.js";
import type { Tunables } from "../domain/tunables.js";
import { WRITE_CONCURRENCY, type ActiveView, type ProcessKey } from "../ports/store.js";
import type { Summarizer, SummarizerFailure, SummarizerUsage } from "../ports/summarizer.js";
import type { ServiceDeps } from "./deps.js";
import { admitModelWork, BUDGET_EXCEEDED, recordModelUse } from "./compaction/model-budget.js";
import { metered } from "./model-usage.js";

export type StrengthAnalysis = NonNullable<MemoryMetadata["strengthAnalyzer"]>;

/**
 * Before a HARD fold with `inlineOnCompaction`: rates the active messages older than the HARD
 * anchor that the caller left unrated, writes the ratings, and returns the view with them (only
 * the writes that applied) and what the analysis did and cost, for the fold's metadata. A failed
 * or unreadable model answer, or a call the tenant's daily budget refuses, writes nothing: the fold
 * then selects as it would have without.
 */
export async function tagBeforeFold(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  tunables: Tunables,
  mode: CompactionModeName,
): Promise<{ view: ActiveView; strengthAnalyzer?: StrengthAnalysis }> {
  if (!tunables.inlineOnCompaction || mode === "NONE" || !MODE_POLICY[mode].ratesStrengthFirst) return { view };
  const summarizer = await deps.summarizer().catch(() => null);
  const analyzer: AnalyzerName = summarizer?.complete ? "model" : "offline";
  const end = Math.max(0, view.messages.length - tunables.hardAnchor);
  const candidates = view.messages.slice(0, end).filter((m) => ratesMessage(m) && analyzable(m.tags, analyzer));
  if (candidates.length === 0) return { view };

  const rated =
    analyzer === "model" && summarizer ? await rateWithModel(deps, key, summarizer, candidates, tunables) : { ratings: rateOffline(candidates) };
  const written = await writeRatings(deps, key, rated.ratings, analyzer);
  deps.metrics.strengthAnalysis(analyzer, written.size, rated.usage);
  if (rated.error) deps.log.warn("strength analyzer: answer not used", { processId: key.processId, code: rated.error.code, error: rated.error.text });
  const messages = view.messages.map((m) => written.get(m.id) ?? m);
  return {
    view: { ...view, messages },
    strengthAnalyzer: {
      analyzer,
      tagged: written.size,
      ...(rated.usage ? { usage: rated.usage } : {}),
      // The code, never the provider's or the model's words (docs/summarizers.md, "Failures").
      ...(rated.error ? { error: rated.error.code } : {}),
    },
  };
}

type Ratings = Array<{ message: Message; strength: Strength }>;

function rateOffline(messages: readonly Message[]): Ratings {
  return messages.map((message) => ({ message, strength: offlineStrength(message) }));
}

/**
 * One batched call; the oldest messages first when they do not all fit one call. Admitted against
 * the tenant's daily budget with its upper estimate (the prompt at 3 chars a token and the answer
 * budget), and counted as `strength` model use.
 */
async function rateWithModel(
  deps: ServiceDeps,
  key: ProcessKey,
  model: Summarizer,
  messages: readonly Message[],
  tunables: Tunables,
): Promise<{ ratings: Ratings; usage?: SummarizerUsage; error?: { code: SummarizerFailure | typeof BUDGET_EXCEEDED; text: string } }> {
  const free = model.contextWindow - SUMMARIZER_PROMPT_RESERVE_TOKENS;
  const maxChars = Math.max(1000, Math.min(tunables.maxSourceChars, Math.floor(free * SAFE_CHARS_PER_TOKEN)));
  const prompt = buildStrengthPrompt(messages, maxChars);
  const estimate = Math.ceil((prompt.system.length + prompt.user.length) / SAFE_CHARS_PER_TOKEN) + prompt.maxOutputTokens;
  const admission = await admitModelWork(deps, key.tenantId, estimate);
  if (!admission.ok) return { ratings: [], error: { code: BUDGET_EXCEEDED, text: "the tenant's daily model budget does not cover the rating call" } };
  const { summarizer, use } = metered(model);
  const outcome = await summarizer.complete!({ system: prompt.system, user: prompt.user, maxOutputTokens: prompt.maxOutputTokens });
  await recordModelUse(deps, admission, "strength", use);
  const usage = outcome.usage && Object.keys(outcome.usage).length > 0 ? { usage: outcome.usage } : {};
  if (!outcome.ok) return { ratings: [], error: { code: outcome.failure.kind, text: outcome.failure.message }, ...usage };
  const answer = parseStrengthAnswer(outcome.text, prompt.messages);
  if (!answer.ok) return { ratings: [], error: { code: "answer_unusable", text: answer.error }, ...usage };
  const ratings = [...answer.ratings].map(([n, strength]) => ({ message: messages[n - 1]!, strength }));
  return { ratings, ...usage };
}

/**
 * Each rating as one conditional write on the tags just read; a message whose tags changed (a
 * caller's PATCH), that was archived or that cannot be written now keeps what it has.
 */
async function writeRatings(deps: ServiceDeps, key: ProcessKey, ratings: Ratings, analyzer: AnalyzerName): Promise<Map<string, Message>> {
  const written = new Map<string, Message>();
  let next = 0;
  const lane = async () => {
    while (next < ratings.length) {
      const { message, strength } = ratings[next++]!;
      const tags = analyzedTags(message.tags, strength, analyzer);
      try {
        const out = await deps.store.retagMessage(key, message.id, { tags, expectedTags: [...message.tags] });
        if (out.ok) written.set(message.id, { ...message, tags });
      } catch (e) {
        deps.log.warn("strength analyzer: tag not written", { processId: key.processId, messageId: message.id, error: String(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, ratings.length) }, lane));
  return written;
}
