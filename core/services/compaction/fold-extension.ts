/**
 * Extending a prepared fold that covers too little (docs/compaction.md, "Who commits a prepared
 * fold"): one summarizer call folds the newer messages into it, same id, still PREPARED; anything
 * short of a written extension leaves it as it was. The rules: domain/fold/usability.ts.
 */
import type { PreparedFold } from "../../domain/fold/lifecycle.js";
import { coversTooLittle, extensionOf } from "../../domain/fold/usability.js";
import type { Message } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import type { Tunables } from "../../domain/tunables.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import { runFold } from "./fold-pipeline.js";
import { extending } from "./transitions.js";

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
  const run = await runFold(
    deps,
    key,
    asPrior,
    tunables,
    { fold: o.added, mode: o.mode, contextWindow: fold.metadata.contextWindow },
    {
      stillWanted: async () => {
        const now = await deps.store.getMemory(key, fold.id);
        return now?.status === "PREPARED" && !now.metadata.extended ? null : `fold is ${now?.status ?? "gone"}`;
      },
      ...extending(deps, key, view, fold),
    },
  );
  if (!run.ok) {
    deps.log.info("fold not extended", { processId: key.processId, foldId: fold.id, refusal: run.refusal });
    return { ok: false, reason: run.refusal.kind };
  }
  return { ok: true, added: run.memory.metadata.extended?.messages ?? 0 };
}
