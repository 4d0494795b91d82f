/**
 * Scenarios around the roll-forward: a fold or a revert whose writes did not fit one transaction
 * leaves a marker on META, and whoever reads next finishes it (docs/compaction.md, "The commit
 * protocol" and "Undoing a compaction").
 */
import { settledView } from "../../core/services/compaction/settle.js";
import { inlineTurn, pin, reverter, walker } from "./actors.js";
import { scenario, type Scenario } from "./scenario.js";
import { addMessages, chat, createProcess, fold, revert, type Stage } from "./setup.js";

/**
 * A settled fold P (4 messages), then a fold F of 6 newer ones whose committer died after its
 * transaction (3 archived, 3 left to the roll-forward with the checker's transaction limit).
 */
export async function crashedFoldOverPrior(stage: Stage) {
  await createProcess(stage);
  await addMessages(stage, chat(6, "early"));
  const prior = await fold(stage);
  await addMessages(stage, chat(6, "later"));
  const crashed = await fold(stage, { crash: true });
  return { prior, crashed };
}


export const rollForwardScenarios: Scenario[] = [
  scenario({
    id: "S1",
    title: "a walker that read 'pending F' stalls while F is reverted (both leave a roll-forward)",
    build: crashedFoldOverPrior,
    actors: (stage, { crashed }) => ({ actors: [walker(stage), reverter(stage, crashed)] }),
  }),
  scenario({
    id: "S2",
    title: "two walkers and a revert of the fold they roll forward",
    build: crashedFoldOverPrior,
    actors: (stage, { crashed }) => ({ actors: [walker(stage, "walker1"), walker(stage, "walker2"), reverter(stage, crashed)] }),
  }),
  scenario({
    id: "S3",
    title: "a new fold while a crashed committer's roll-forward is unfinished, and a walker",
    async build(stage) {
      await crashedFoldOverPrior(stage);
      await addMessages(stage, chat(6, "newest"));
      return {};
    },
    actors: (stage) => ({ actors: [inlineTurn(stage), walker(stage)] }),
  }),
  scenario({
    id: "S4",
    title: "a revert of the prior summary while a crashed revert's restore walker is unfinished",
    async build(stage) {
      const { prior, crashed } = await crashedFoldOverPrior(stage);
      await settledView(stage.deps(), stage.key);
      await revert(stage, crashed, { crash: true });
      return { prior };
    },
    actors: (stage, { prior }) => ({ actors: [walker(stage), reverter(stage, prior)] }),
  }),
  scenario({
    id: "S13",
    title: "a PATCH pins a message a crashed revert has yet to restore, while a walker restores it",
    async build(stage) {
      const { crashed } = await crashedFoldOverPrior(stage);
      await settledView(stage.deps(), stage.key);
      await revert(stage, crashed, { crash: true });
      const memory = await stage.deps().store.getMemory(stage.key, crashed);
      // The last message the fold took: past the undo's transaction, still archived.
      return { target: memory!.sourceRefs.at(-1)! };
    },
    actors: (stage, { target }) => ({ actors: [walker(stage), pin(stage, target)] }),
  }),
];
