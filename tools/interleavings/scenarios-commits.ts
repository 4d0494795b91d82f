/**
 * Scenarios of the worker's commit of a prepared fold (docs/compaction.md, "Who commits a prepared
 * fold"): its `commit` job against an EMERGENCY turn that commits the fold itself, delivered twice
 * beside a forced manual compaction, against a PATCH that pins a message the fold covers, and
 * its extension of a fold that covers too little against an EMERGENCY turn and a PATCH that pins
 * a message the extension adds.
 */
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import { backgroundTurn, committer, manualCompaction, pin } from "./actors.js";
import { scenario, type Scenario } from "./scenario.js";
import { queuedFold } from "./scenarios-folds.js";
import { addMessages, chat, type Stage } from "./setup.js";

/** A HARD fold queued by a turn and prepared by the worker: ready for its commit. */
export async function preparedFold(stage: Stage): Promise<{ foldId: string; covered: string }> {
  const { foldId } = await queuedFold(stage);
  const done = await runQueuedFold(stage.deps("background"), { ...stage.key, foldId, mode: "HARD", job: "prepare" });
  if (!("done" in done) || done.done !== "prepared") throw new Error(`setup: the fold was not prepared (${JSON.stringify(done)})`);
  const fold = await stage.deps().store.getMemory(stage.key, foldId);
  return { foldId, covered: fold!.sourceRefs[0]! };
}

/**
 * A prepared fold, then eight long messages more: committing it as it is would leave the prompt
 * of the commit job above hardThreshold, so the worker extends it by the newer ones it may fold
 * (the oldest of the eight among them; the newest stay as the anchor).
 */
export async function outgrownFold(stage: Stage): Promise<{ foldId: string; newer: string }> {
  const { foldId } = await preparedFold(stage);
  const later = await addMessages(stage, chat(8, "later").map((m) => ({ ...m, content: `${m.content} ${"The row is checked. ".repeat(100)}` })));
  return { foldId, newer: later[0]!.id };
}

export const commitScenarios: Scenario[] = [
  scenario({
    id: "S15",
    title: "the worker commits a prepared fold a turn found due while an EMERGENCY turn commits it itself",
    build: preparedFold,
    actors: (stage, { foldId }) => ({ actors: [committer(stage, foldId), backgroundTurn(stage, "turn", 0.97)] }),
  }),
  scenario({
    id: "S16",
    title: "a commit request delivered twice and a forced manual compaction",
    build: preparedFold,
    actors: (stage, { foldId }) => ({ actors: [committer(stage, foldId, "committer1"), committer(stage, foldId, "committer2"), manualCompaction(stage)] }),
  }),
  scenario({
    id: "S17",
    title: "a PATCH pins a message of a prepared fold while the worker commits that fold",
    build: preparedFold,
    actors: (stage, { foldId, covered }) => ({ actors: [pin(stage, covered), committer(stage, foldId)] }),
  }),
  scenario({
    id: "S18",
    title: "the worker extends a prepared fold that covers too little while an EMERGENCY turn commits it and a PATCH pins a message the extension adds",
    build: outgrownFold,
    actors: (stage, { foldId, newer }) => ({ actors: [committer(stage, foldId), backgroundTurn(stage, "turn", 0.97), pin(stage, newer)] }),
  }),
];
