/**
 * Extending a prepared fold that covers too little (docs/compaction.md, "Who commits a prepared
 * fold"): one summarizer call folds the newer messages into it, same id, still PREPARED; anything
 * short of a written extension leaves it as it was. The rules: domain/fold/usability.ts.
 */
import type { PreparedFold } from "../../domain/fold/lifecycle.js";
import * as rows from "../../domain/fold/rows.js";
import { coversTooLittle, extensionOf } from "../../domain/fold/usability.js";
import type { Message } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { runFold } from "./fold-pipeline.js";
import { lossFields } from "./summary-fields.js";

export type Extension = { ok: true; added: number } | { ok: false; reason: string };

/**
 * Extends `fold` (PREPARED, read with its `sourceRefs`) when it covers too little, under the
 * lease for the version of `view`. Never throws: a failed extension leaves the fold as it was.
 */
export async function extendIfShort(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: PreparedFold,
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
  prepared: PreparedFold,
  tunables: Tunables,
  o: { mode: FoldModeName; added: Message[] },
): Promise<Extension> {
  const fold = prepared.memory;
  // The prepared summary stands in for the active one: the summarizer carries it on as the prior summary.
  const asPrior: ActiveView = { ...view, summaries: [{ ...fold, status: "OK" }] };
  const order = new Map(view.messages.map((m, i) => [m.id, i]));
  const m = fold.metadata;
  const run = await runFold(
    deps,
    key,
    asPrior,
    tunables,
    { fold: o.added, mode: o.mode, contextWindow: m.contextWindow },
    {
      stillWanted: async () => {
        const now = await deps.store.getMemory(key, fold.id);
        return now?.status === "PREPARED" && !now.metadata.extended ? null : `fold is ${now?.status ?? "gone"}`;
      },
      // A failed extension writes nothing: the prepared fold stays, to be committed as it is.
      failed: (_s, error) => ({ ...fold, metadata: { ...m, error } }),
      putFailed: async () => undefined,
      memory: (s) => {
        const sources = [...fold.sourceRefs, ...s.fold.map((x) => x.id)].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
        // The loss report covers every message the summary now stands for, both parts.
        const covers = new Set(sources);
        return rows.extended(fold, s, { sources, lost: lossFields(view.messages.filter((x) => covers.has(x.id)), s.fields.content) });
      },
      write: async (extended, owner) => {
        const stored = await deps.store.extendFold(key, extended, { owner, version: view.state.version });
        return stored.ok ? { ok: true, leaseCleared: false } : { ok: false, refusal: { kind: "write", reason: "changed while extending" } };
      },
    },
  );
  if (!run.ok) {
    deps.log.info("fold not extended", { processId: key.processId, foldId: fold.id, refusal: run.refusal });
    return { ok: false, reason: run.refusal.kind };
  }
  deps.metrics.preparedFold("extended");
  const added = run.memory.metadata.extended?.messages ?? 0;
  deps.log.info("fold extended", { processId: key.processId, foldId: fold.id, added, messages: run.memory.sourceRefs.length });
  return { ok: true, added };
}
