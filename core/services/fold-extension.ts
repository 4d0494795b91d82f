/**
 * Extending a prepared fold that covers too little (docs/compaction.md, "Who commits a prepared
 * fold"): when the messages appended since it was prepared would leave the prompt after its
 * commit still at or above the mode's threshold, one summarizer call folds the newer foldable
 * messages into it (the prepared summary as the prior summary), and the fold, same id, still
 * PREPARED and still chaining the same active summary, is committed once. Anything short of a
 * written extension leaves the prepared fold as it was, to be committed as it is.
 */
import { tokensAfterFold } from "../domain/fold-size.js";
import { planFold } from "../domain/fold-plan.js";
import type { Memory, Message } from "../domain/model.js";
import { policyOf, type FoldModeName } from "../domain/mode-policy.js";
import { newestSummary, replayTokens } from "../domain/replay.js";
import { foldsByStrength } from "../domain/selector.js";
import { effectiveStrength } from "../domain/strength.js";
import { foldWithinCallCap } from "../domain/summary-plan.js";
import type { Tunables } from "../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { metricModeOf } from "./commit.js";
import type { ServiceDeps } from "./deps.js";
import { runFold } from "./fold-pipeline.js";
import { lossFields } from "./summary-fields.js";

export type Extension = { ok: true; added: number } | { ok: false; reason: string };

/**
 * Whether committing `fold` (its `sourceRefs` read) would leave the prompt at or above `mode`'s
 * threshold: the messages appended since it was prepared outgrew what it covers.
 */
export function coversTooLittle(view: ActiveView, fold: Memory, tunables: Tunables, o: { mode: FoldModeName; tokensBefore: number }): boolean {
  const window = fold.metadata.contextWindow;
  if (!window) return false;
  const after = tokensAfterFold(view, { fold: fold.sourceRefs.map((id) => ({ id })), tokensBefore: o.tokensBefore }, fold.tokens);
  return after / window >= policyOf(o.mode).threshold(tunables);
}

/**
 * The newer messages an extension of `fold` adds: what `mode` selects now (never pinned, never the
 * anchor or the current turn, tool groups whole: `planFold`) minus what the fold covers; a reason
 * instead when the fold would not commit anyway, nothing newer is foldable, or the addition needs
 * more than one summarizer call.
 */
export function extensionOf(view: ActiveView, fold: Memory, tunables: Tunables, o: { mode: FoldModeName; tokensBefore: number }): Message[] | string {
  if (fold.metadata.extended) return "extended already";
  if ((fold.metadata.supersededMemoryId ?? null) !== (newestSummary(view)?.id ?? null)) return "stale";
  const active = new Set(view.messages.map((m) => m.id));
  if (!fold.sourceRefs.every((id) => active.has(id))) return "stale";
  const own = replayTokens(view);
  const plan = planFold(view.messages, o.mode, tunables, { contextWindow: fold.metadata.contextWindow, own, tokensBefore: o.tokensBefore, minSaving: false });
  if (!plan.ok) return plan.reason;
  const covered = new Set(fold.sourceRefs);
  const added = plan.fold.filter((m) => !covered.has(m.id));
  if (added.length === 0) return "nothing newer to fold";
  // The commit checks every source against the mode the fold was prepared for too (prepared-commit.ts).
  const preparedFor = (fold.metadata.preparedFor ?? "HARD") as FoldModeName;
  if (!added.every((m) => foldsByStrength(effectiveStrength(m), preparedFor))) return "a newer message is too strong for the prepared mode";
  // One call: a larger addition would delay the commit by two rounds of calls (fold-ahead.ts).
  if (foldWithinCallCap(added, tunables.maxSourceChars, { ...tunables, maxSummarizerCalls: 2 }).cut) return "more than one summarizer call";
  return added;
}

/**
 * Extends `fold` (PREPARED, read with its `sourceRefs`) when it covers too little, under the
 * lease for the version of `view`. Never throws: a failed extension leaves the fold as it was.
 */
export async function extendIfShort(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: Memory,
  o: { mode: FoldModeName; tokensBefore: number },
): Promise<Extension> {
  try {
    const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
    if (!coversTooLittle(view, fold, tunables, o)) return { ok: false, reason: "covers enough" };
    const added = extensionOf(view, fold, tunables, o);
    if (typeof added === "string") return { ok: false, reason: added };
    return await extend(deps, key, view, fold, tunables, { ...o, added });
  } catch (e) {
    deps.log.warn("fold extension failed", { processId: key.processId, foldId: fold.id, error: String(e) });
    return { ok: false, reason: "error" };
  }
}

async function extend(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: Memory,
  tunables: Tunables,
  o: { mode: FoldModeName; added: Message[] },
): Promise<Extension> {
  // The prepared summary stands in for the active one: the summarizer carries it on as the prior summary.
  const asPrior: ActiveView = { ...view, summaries: [{ ...fold, status: "OK" }] };
  const order = new Map(view.messages.map((m, i) => [m.id, i]));
  const m = fold.metadata;
  const run = await runFold(
    deps,
    key,
    asPrior,
    tunables,
    { fold: o.added, metricMode: metricModeOf(o.mode), contextWindow: m.contextWindow },
    {
      stillWanted: async () => {
        const now = await deps.store.getMemory(key, fold.id);
        return now?.status === "PREPARED" && !now.metadata.extended ? null : `fold is ${now?.status ?? "gone"}`;
      },
      // A failed extension writes nothing: the prepared fold stays, to be committed as it is.
      failed: (_s, error) => ({ ...fold, metadata: { ...m, error } }),
      putFailed: async () => undefined,
      memory: (s) => {
        const { keepUnits: _keep, ...base } = fold;
        const sources = [...fold.sourceRefs, ...s.fold.map((x) => x.id)].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
        // The loss report covers every message the summary now stands for, both parts.
        const covers = new Set(sources);
        const lost = lossFields(view.messages.filter((x) => covers.has(x.id)), s.fields.content);
        return {
          ...base,
          content: s.fields.content,
          sourceRefs: sources,
          tokens: s.fields.tokens,
          citations: s.fields.citations,
          droppedUnits: lost.droppedUnits,
          ...(s.fields.keepUnits ? { keepUnits: s.fields.keepUnits } : {}),
          metadata: {
            ...m,
            provider: s.metadata.provider,
            model: s.metadata.model,
            compactedMessages: sources.length,
            summarizerCalls: (m.summarizerCalls ?? 0) + (s.metadata.summarizerCalls ?? 0),
            ...(s.metadata.truncated || m.truncated ? { truncated: true } : {}),
            loss: lost.loss,
            extended: { messages: s.fold.length, at: s.at.toISOString() },
          },
        };
      },
      write: async (extended, owner) => {
        const stored = await deps.store.extendFold(key, extended, { owner, version: view.state.version });
        return stored.ok ? { ok: true, leaseCleared: false } : { ok: false, reason: "changed while extending" };
      },
    },
  );
  if (!run.ok) {
    deps.log.info("fold not extended", { processId: key.processId, foldId: fold.id, failure: run.failure });
    return { ok: false, reason: run.failure.step };
  }
  deps.metrics.preparedFold("extended");
  const added = run.memory.metadata.extended?.messages ?? 0;
  deps.log.info("fold extended", { processId: key.processId, foldId: fold.id, added, messages: run.memory.sourceRefs.length });
  return { ok: true, added };
}
