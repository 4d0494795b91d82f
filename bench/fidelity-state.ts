/**
 * One state of the fidelity replay measured (bench/fidelity.ts has the method): the answers its
 * prompt carries with each question as the query and without one, against truncation at 0.85 of
 * the window plus BM25's top 3 older turns.
 */
import type { Message } from "../core/domain/model.js";
import { createHistoryIndex } from "../core/domain/search-index.js";
import { CHARS_PER_TOKEN } from "../core/domain/tokens.js";
import type { depsFor } from "./support/fidelity-deps.js";
import { answered, createVerbatimIndex } from "./support/locomo.js";
import type { ServiceCode } from "./support/service-code.js";

const tokens = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

/** The newest texts whose chars fit `budgetTokens` (the newest one always); returns their start index. */
function truncationStart(texts: readonly string[], budgetTokens: number): number {
  let chars = 0;
  let i = texts.length - 1;
  for (; i >= 0; i--) {
    if (i < texts.length - 1 && chars + texts[i]!.length > budgetTokens * CHARS_PER_TOKEN) break;
    chars += texts[i]!.length;
  }
  return i + 1;
}

/** `BENCH_FIDELITY_DETAIL=1`: which questions (by index) a state's prompts carried, and its block. */
export interface SnapshotDetail {
  turns: number;
  replay: number[];
  withQuery: number[];
  block: string;
  active: number;
}
export const DETAIL = process.env.BENCH_FIDELITY_DETAIL === "1";

export type Deps = ReturnType<typeof depsFor>;
export type Key = { tenantId: string; processId: string };

/** Both comparisons on one state: ours (block + active) against truncation of the transcript so far. */
export async function measureState(
  code: ServiceCode,
  deps: Deps,
  key: Key,
  window: number,
  state: { texts: readonly string[]; questions: ReturnType<typeof answered>; block: string; active: readonly Message[] },
) {
  const { texts, block } = state;
  const inTranscript = createVerbatimIndex(texts.join("\n"));
  const questions = state.questions.filter((q) => inTranscript(q.answer));
  const activeText = state.active.map((m) => m.content).join("\n");
  const finalOurs = `${block}\n${activeText}`;
  const truncated = texts.slice(truncationStart(texts, 0.85 * window));
  const truncatedText = truncated.join("\n");
  const inFinal = createVerbatimIndex(finalOurs);
  const inTruncated = createVerbatimIndex(truncatedText);
  const index = (q: (typeof questions)[number]) => state.questions.indexOf(q);
  const inReplay = questions.filter((q) => inFinal(q.answer));
  const queryFound: number[] = [];
  // The baseline's BM25 runs over the turns truncation left out, like ours runs over the archive.
  const older = createHistoryIndex(texts.slice(0, texts.length - truncated.length).map((content, i) => ({ id: String(i), content, tags: [] as string[] })));
  const view = await code.settledView(deps, key);
  const tunables = await deps.tunables.forProcess(key.tenantId, "locomo");
  const ownTokens = tokens(finalOurs);
  const out = {
    questions: questions.length,
    oursWithQuery: 0,
    baselineWithQuery: 0,
    oursQueryTokens: [] as number[],
    baselineQueryTokens: [] as number[],
    oursFinal: inReplay.length,
    truncationFinal: questions.filter((q) => inTruncated(q.answer)).length,
    oursFinalTokens: ownTokens,
    truncationFinalTokens: tokens(truncatedText),
  };
  for (const q of questions) {
    const composed = await code.composeContext(deps, key, view, { query: q.question, recallTokens: code.recallBudget(tunables, window, ownTokens) });
    const ours = `${composed.block}\n${activeText}`;
    const top = older.search({ q: q.question, limit: 3 }).map((h) => texts[Number(h.id)]!);
    const baseline = `${top.join("\n")}\n${truncatedText}`;
    if (createVerbatimIndex(ours)(q.answer)) {
      out.oursWithQuery++;
      queryFound.push(index(q));
    }
    if (createVerbatimIndex(baseline)(q.answer)) out.baselineWithQuery++;
    out.oursQueryTokens.push(tokens(ours));
    out.baselineQueryTokens.push(tokens(baseline));
  }
  return { ...out, found: { replay: inReplay.map(index), withQuery: queryFound } };
}

/** The counts of {@link measureState} summed over the states along a replay. */
export type SnapshotSums = { questions: number; oursWithQuery: number; baselineWithQuery: number; oursReplay: number; truncation: number; count: number; oursTokens: number; truncationTokens: number };

/** Adds one measured state to the sums along the replay. */
export function addSnapshot(sums: SnapshotSums, at: Awaited<ReturnType<typeof measureState>>): void {
  sums.questions += at.questions;
  sums.oursWithQuery += at.oursWithQuery;
  sums.baselineWithQuery += at.baselineWithQuery;
  sums.oursReplay += at.oursFinal;
  sums.truncation += at.truncationFinal;
  sums.count++;
  sums.oursTokens += at.oursFinalTokens;
  sums.truncationTokens += at.truncationFinalTokens;
}
