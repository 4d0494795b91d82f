/**
 * Scenarios of folds racing folds: the worker's prepare against the turn that commits it, a
 * duplicate delivery of the worker's request, a manual compaction against a turn (in the request
 * and queued for the worker), and a fold against an undo (docs/compaction.md, "Off the turn's
 * critical path" and "Undoing a compaction").
 */
import { queueFold } from "../../core/services/compaction/transitions.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { compactForTurn } from "../../core/services/compaction/turn-compaction.js";
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import { backgroundTurn, inlineTurn, manualCompaction, reverter, worker } from "./actors.js";
import { scenario, type Scenario } from "./scenario.js";
import { addMessages, chat, createProcess, fold, WINDOW, type Stage } from "./setup.js";

/** Eight messages and a HARD fold queued by a background turn from the prepare threshold (0.75). */
export async function queuedFold(stage: Stage): Promise<{ foldId: string }> {
  await createProcess(stage);
  await addMessages(stage, chat(8));
  const out = await compactForTurn(stage.deps("background"), stage.key, { model: { contextWindow: WINDOW }, prompt: { tokens: 0.75 * WINDOW } });
  if (out.reason !== "compaction_queued" || !out.memoryId) throw new Error(`setup: no fold was queued (${out.reason ?? "?"})`);
  return { foldId: out.memoryId };
}

export const foldScenarios: Scenario[] = [
  scenario({
    id: "S5",
    title: "the worker prepares a queued fold while a turn at the hard threshold looks for it to commit",
    build: queuedFold,
    actors: (stage, { foldId }) => ({ actors: [worker(stage, foldId), backgroundTurn(stage)] }),
  }),
  scenario({
    id: "S6",
    title: "a duplicate CompactionRequested delivery, the first one, and an EMERGENCY turn committing the prepared fold",
    build: queuedFold,
    actors: (stage, { foldId }) => ({ actors: [worker(stage, foldId, "worker1"), worker(stage, foldId, "worker2"), backgroundTurn(stage, "turn", 0.97)] }),
  }),
  scenario({
    id: "S7",
    title: "a forced manual compaction against a turn's inline fold",
    async build(stage) {
      await createProcess(stage);
      await addMessages(stage, chat(6, "early"));
      await fold(stage);
      await addMessages(stage, chat(6, "later"));
      return {};
    },
    actors: (stage) => ({ actors: [manualCompaction(stage), inlineTurn(stage)] }),
  }),
  scenario({
    id: "S8",
    title: "a turn's inline fold against a revert of the active summary",
    async build(stage) {
      await createProcess(stage);
      await addMessages(stage, chat(6, "early"));
      const active = await fold(stage);
      await addMessages(stage, chat(6, "later"));
      return { active };
    },
    actors: (stage, { active }) => ({ actors: [inlineTurn(stage), reverter(stage, active)] }),
  }),
  scenario({
    id: "S14",
    title: "the worker runs a queued manual compaction while a turn finds it beside a prepared automatic fold",
    async build(stage) {
      const { foldId } = await queuedFold(stage);
      const deps = stage.deps("background");
      await runQueuedFold(deps, { ...stage.key, foldId, mode: "HARD", job: "prepare" });
      // A forced manual compaction that ran past its budget: answered 202, queued for the worker.
      const view = await settledView(deps, stage.key);
      const manual = await queueFold(deps, stage.key, view, { mode: "HARD", job: "manual", contextWindow: WINDOW, tokensBefore: 0.8 * WINDOW, forced: true, instructions: "keep the dates" });
      return { manual: manual.id };
    },
    actors: (stage, { manual }) => ({
      actors: [worker(stage, manual, "worker", "manual"), backgroundTurn(stage)],
      // A manual compaction answered 202 is done by the worker, or still queued for its retry;
      // never dropped as the duplicate of an automatic fold (docs/compaction.md, "What a turn does").
      check: ({ snapshot }) => {
        const row = snapshot.memories.find((m) => m.id === manual);
        return row?.status === "DISCARDED" ? [`queued manual compaction ${manual} was discarded (${row.metadata.discardReason ?? "no reason"})`] : [];
      },
    }),
  }),
];
