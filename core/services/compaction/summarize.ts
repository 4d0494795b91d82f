/**
 * Summarizing a fold (docs/summarizers.md, "Summarizing"): the summarizer and its input cap for the
 * fold's window, the chunked summary (summary-chunks.ts), then the quality gate with one retry. No
 * store access: the caller writes what comes back.
 */
import { AppError } from "../../domain/errors.js";
import { checkSummary, retryInstructions, type QualityVerdict } from "../../domain/quality-gate.js";
import { summarizerInputCap, withSummaryBudget } from "../../domain/summarizer-fit.js";
import type { Tunables } from "../../domain/tunables.js";
import type { SummarizeInput, Summarizer } from "../../ports/summarizer.js";
import type { ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { addUsage, callSummarizer, cutFlag, failed, nativeOf, summarizeChunks, type ChunkedSummary, type SummaryRequest } from "./summary-chunks.js";

/**
 * Summarizes, then runs the quality gate (docs/compaction.md): a failing summary is retried once
 * (the last chunk, with what failed and the missing units named) when `maxSummarizerCalls` leaves
 * a call for it; a second failure, or one without a call left, is a FAILED row with
 * `quality_gate: <check>`.
 */
export async function summarizeChecked(
  deps: ServiceDeps,
  summarizer: Summarizer,
  inputCap: number,
  tunables: Tunables,
  plan: SummaryRequest,
  priorSummary: string | null,
  required: string[],
): Promise<ChunkedSummary> {
  const first = await summarizeChunks(summarizer, inputCap, tunables, plan, priorSummary, required);
  if (!first.ok) return first;
  const maxTokens = tunables.summaryMaxTokens;
  const checked = checkSummary(first.result.text, { maxTokens, required });
  // A summary the summarizer cut to the budget passes the checks on what is left; the gate still
  // asks once for one that fits whole, and keeps the cut one, marked `truncated`, if that is all
  // it gets (docs/summarizers.md, "Quality gate").
  const cut = checked.ok && first.result.truncated === true;
  if (checked.ok && !cut) return first.result;
  const verdict: Exclude<QualityVerdict, { ok: true }> = checked.ok
    ? { ok: false, check: "over_budget", detail: `the summarizer cut its answer to the budget of ${maxTokens} tokens` }
    : checked;
  deps.metrics.qualityGateRefused();
  if (first.result.calls >= tunables.maxSummarizerCalls) {
    if (cut) return first.result;
    const { calls, usage } = first.result;
    const gate = { check: verdict.check, detail: verdict.detail.slice(0, 300), attempts: 1 };
    const code = `quality_gate: ${verdict.check}`;
    return { ok: false, error: code, code, calls, ...(usage ? { usage } : {}), gate };
  }

  // Every message of a fold is the process's: the first names it for the runbook's queries.
  deps.log.warn("summary failed the quality gate, retrying once", { processId: plan.fold[0]?.processId, check: verdict.check, detail: verdict.detail });
  const retryNote = retryInstructions(verdict, maxTokens);
  const input: SummarizeInput = {
    ...first.lastInput,
    instructions: [first.lastInput.instructions, retryNote].filter(Boolean).join("\n\n"),
    mustKeep: [...new Set([...(first.lastInput.mustKeep ?? []), ...(verdict.missing ?? [])])],
  };
  const again = await callSummarizer(summarizer, input);
  const calls = first.result.calls + 1;
  const usage = addUsage(first.result.usage, again.usage);
  if (!again.ok) return failed(again, calls, usage);
  const second: QualityVerdict = checkSummary(again.summary, { maxTokens, required });
  if (!second.ok) deps.metrics.qualityGateRefused();
  if (!second.ok && cut) return first.result;
  if (!second.ok) {
    return {
      ok: false,
      error: `quality_gate: ${second.check}`,
      code: `quality_gate: ${second.check}`,
      calls,
      ...(usage ? { usage } : {}),
      gate: { check: second.check, detail: second.detail.slice(0, 300), attempts: 2 },
    };
  }
  return {
    ok: true,
    text: again.summary,
    calls,
    ...(usage ? { usage } : {}),
    ...(again.citations ? { citations: again.citations } : {}),
    carried: first.result.carried,
    ...cutFlag(first.earlierCut || again.truncated === true),
    // The retry sent what the first call sent: its block stands for the same range.
    ...(input.providerFold ? nativeOf(again) : first.result.nativeNote ? { nativeNote: first.result.nativeNote } : {}),
  };
}

/**
 * The summary of an EMERGENCY fold whose summarizer kept failing: the offline summarizer's, over
 * the same chunks. It is checked like any summary except for the required units: an extractive
 * summary keeps what its budget holds, and what it dropped is in the loss report
 * (docs/summarizers.md, "Quality gate").
 */
export async function summarizeOffline(
  offline: Summarizer,
  inputCap: number,
  tunables: Tunables,
  plan: SummaryRequest,
  priorSummary: string | null,
  required: string[],
): Promise<ChunkedSummary> {
  const run = await summarizeChunks(offline, inputCap, tunables, plan, priorSummary, required);
  if (!run.ok) return run;
  const verdict = checkSummary(run.result.text, { maxTokens: tunables.summaryMaxTokens, required: [] });
  if (verdict.ok) return run.result;
  const code = `quality_gate: ${verdict.check}`;
  return { ok: false, error: code, code, calls: run.result.calls, gate: { check: verdict.check, detail: verdict.detail.slice(0, 300), attempts: 1 } };
}

type Ready = { ok: true; summarizer: Summarizer; inputCap: number; tunables: Tunables } | { ok: false; reason: string };

/**
 * The summarizer, the input cap of one call, and the tunables a fold for a model window of
 * `contextWindow` summarizes with: the summary budget grown with that window as far as the
 * summarizer's window allows (`summaryBudgetFor`). A summarizer that cannot be built
 * (configuration) or whose window the tunables do not fit is a reason, logged, not a throw: stored
 * settings are checked against the window when saved, so this is a changed deployment.
 */
export async function summarizerFor(deps: ServiceDeps, key: ProcessKey, base: Tunables, contextWindow?: number): Promise<Ready> {
  let summarizer: Summarizer;
  try {
    summarizer = await deps.summarizer();
  } catch (e) {
    deps.log.error("compaction skipped: no summarizer", { processId: key.processId, error: String(e) });
    return { ok: false, reason: "summarizer_unavailable" };
  }
  const tunables = withSummaryBudget(base, contextWindow, summarizer.contextWindow);
  try {
    return { ok: true, summarizer, inputCap: summarizerInputCap(tunables, summarizer.contextWindow, tunables.summaryMaxTokens), tunables };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    deps.log.error("compaction skipped: summarizer window too small", { processId: key.processId, error: e.message });
    return { ok: false, reason: `summarizer_window_too_small: ${e.message}` };
  }
}
