/**
 * Scenarios of the message controls against the compaction paths: a PATCH that pins a message
 * while a clearing round, an inline fold or a prepared fold's commit would take it
 * (docs/compaction.md, "Changing a message's strength after the fact", "Tool-result clearing").
 */
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import { backgroundTurn, clearing, inlineTurn, pin } from "./actors.js";
import { scenario, type Scenario, type ScenarioCheck } from "./scenario.js";
import { queuedFold } from "./scenarios-folds.js";
import { addMessages, chat, createProcess, type MessageSpec, type Stage } from "./setup.js";

/** A small window, so a few tool results of ~300 tokens are worth a clearing round. */
const CLEAR_WINDOW = 4_000;

/** Five read_file calls with results of ~300 tokens, and a USER question after them. */
async function toolHistory(stage: Stage): Promise<{ target: string }> {
  await createProcess(stage);
  const specs: MessageSpec[] = [];
  for (let i = 0; i < 5; i++) {
    specs.push({ role: "ASSISTANT", content: "", toolCalls: [{ id: `call${i}`, name: "read_file", arguments: `{"path":"src/file${i}.ts"}` }] });
    specs.push({ role: "TOOL", toolCallId: `call${i}`, content: `export const table${i} = [${"1234567890, ".repeat(100)}];` });
  }
  specs.push({ role: "USER", content: "Which of these files defines the billing table?" });
  const messages = await addMessages(stage, specs);
  return { target: messages[1]!.id };
}

/** The clear of message `id` applied after a PATCH pinned it (a pinned result is never cleared). */
function clearedAfterPin({ run }: ScenarioCheck, id: string): string[] {
  const sk = `M#${id}`;
  const pinnedAt = run.steps.findIndex((s) => s.actor === "pin" && s.call === "TransactWriteCommand" && !s.refused);
  const clearedAt = run.steps.findIndex(
    (s) =>
      s.actor === "clear" &&
      s.call === "UpdateCommand" &&
      !s.refused &&
      (s.input as { Key?: { sk?: string } } | undefined)?.Key?.sk === sk,
  );
  if (pinnedAt >= 0 && clearedAt > pinnedAt) return [`message ${id} was pinned (step ${pinnedAt}) and then cleared (step ${clearedAt})`];
  // The race only means something if the round does clear the target when nothing pins it first:
  // a schedule that runs the whole round before the PATCH must clear it.
  const firstPin = run.steps.findIndex((s) => s.actor === "pin");
  const roundFirst = run.steps.some((s) => s.actor === "clear") && (firstPin < 0 || !run.steps.slice(firstPin).some((s) => s.actor === "clear"));
  return roundFirst && clearedAt < 0 ? [`the clearing round ran before the PATCH and did not clear message ${id}`] : [];
}

export const controlScenarios: Scenario[] = [
  scenario({
    id: "S9",
    title: "a PATCH pins an old tool result while a clearing round clears it",
    build: toolHistory,
    actors: (stage, { target }) => ({
      // In HARD, whose anchor (5 messages) leaves the oldest results to the round; SOFT's keeps them all.
      actors: [clearing(stage, CLEAR_WINDOW, 0.9 * CLEAR_WINDOW), pin(stage, target)],
      check: (c) => clearedAfterPin(c, target),
    }),
  }),
  scenario({
    id: "S10",
    title: "a PATCH pins a message while a turn's inline fold selects it",
    async build(stage) {
      await createProcess(stage);
      const messages = await addMessages(stage, chat(8));
      return { target: messages[0]!.id };
    },
    actors: (stage, { target }) => ({ actors: [inlineTurn(stage), pin(stage, target)] }),
  }),
  scenario({
    id: "S11",
    title: "a PATCH pins a message of a prepared fold while an EMERGENCY turn commits that fold",
    async build(stage) {
      const { foldId } = await queuedFold(stage);
      const done = await runQueuedFold(stage.deps("background"), { ...stage.key, foldId, mode: "HARD", job: "prepare" });
      if (!("done" in done) || done.done !== "prepared") throw new Error(`setup: the fold was not prepared (${JSON.stringify(done)})`);
      const fold = await stage.deps().store.getMemory(stage.key, foldId);
      return { target: fold!.sourceRefs[0]! };
    },
    actors: (stage, { target }) => ({ actors: [pin(stage, target), backgroundTurn(stage, "turn", 0.97)] }),
  }),
];
