/**
 * Scenarios of events delivered again: an accepted offer's `InboxItemAnswered` redelivered while
 * the user undoes the range fold it produced (docs/api.md, "Events"; docs/compaction.md, "Range
 * jobs").
 */
import { answerInboxItem } from "../../core/services/inbox.js";
import { offerRecompaction, runAcceptedOffer, PLAN_MARKER_TAG } from "../../core/services/recompaction-offers.js";
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import { answeredDelivery, reverter } from "./actors.js";
import { scenario, type Scenario } from "./scenario.js";
import { addMessages, chat, createProcess, TENANT, type MessageSpec, type Stage } from "./setup.js";

const TOPIC = "billing importer";

/**
 * A plan (marker, four steps) after two user turns, completed; the offer accepted, its range job
 * queued and folded by the worker. Returns the range memory and the answered item. The messages
 * get increasing creation times a few ms apart, so the range holds exactly the plan.
 */
async function foldedOffer(stage: Stage) {
  await createProcess(stage);
  const start = Date.now();
  const at = (ms: number) => new Date(start + ms);
  const timed = (specs: MessageSpec[], from: number) => specs.map((m, i) => ({ ...m, at: at(from + i) }));
  await addMessages(stage, [
    ...timed(chat(3, "before"), 1),
    ...timed([{ role: "ASSISTANT", content: "Plan: validate, map, import, report.", tags: [PLAN_MARKER_TAG] }], 10),
    ...timed(chat(4, "step").map((m) => ({ ...m, role: "ASSISTANT" as const })), 11),
    ...timed([{ role: "USER", content: "Now let us look at the invoices." }], 30),
  ]);
  const completedAt = at(20).toISOString();
  const deps = stage.deps("background");
  const offer = await offerRecompaction(deps, { ...stage.key, planId: "plan-1", topicLabel: TOPIC, completedAt });
  if (!offer.item) throw new Error("setup: no offer was made");
  await answerInboxItem(deps, TENANT, offer.item.id, true);
  const detail = { tenantId: TENANT, itemId: offer.item.id, accepted: true };
  const queued = await runAcceptedOffer(deps, detail);
  if (!queued?.memoryId) throw new Error(`setup: no range job was queued (${queued?.reason ?? "?"})`);
  const done = await runQueuedFold(deps, { ...stage.key, foldId: queued.memoryId, mode: "RANGE", job: "range" });
  if (!("done" in done) || done.done !== "committed") throw new Error(`setup: the range job did not commit (${JSON.stringify(done)})`);
  return { range: queued.memoryId, detail };
}

export const eventScenarios: Scenario[] = [
  scenario({
    id: "S12",
    title: "an accepted offer's InboxItemAnswered delivered again while its range fold is reverted",
    build: foldedOffer,
    actors: (stage, { range, detail }) => ({
      actors: [answeredDelivery(stage, detail), reverter(stage, range)],
      // An undo stands: a late delivery of the answer neither folds the range again nor queues a
      // range job for it (one that could never commit, its marker id being taken, and would fail
      // every delivery until it is dead-lettered).
      check({ snapshot }) {
        if (snapshot.memories.find((m) => m.id === range)?.status !== "REVERTED") return [];
        const again = snapshot.memories.filter(
          (m) => m.id !== range && m.metadata.topicLabel === TOPIC && (m.status === "OK" || m.status === "QUEUED" || m.status === "PREPARED"),
        );
        return again.map((m) => `range fold ${range} was reverted, and a redelivered InboxItemAnswered made ${m.status} range fold ${m.id} of the same offer`);
      },
    }),
  }),
];
