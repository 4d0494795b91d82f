/**
 * Scenarios of the data lifecycle (docs/api.md, "Export and import" and "Deleting a process";
 * docs/compaction.md, "Undoing a compaction"): an export against a fold and an undo, an import
 * against a turn and a crash, a delete against an offer and a fold, and an undo against the
 * originals' expiry on a clock that jumps past it.
 */
import { AppError } from "../../core/domain/errors.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { exportPage } from "../../core/services/process-export.js";
import { offerId, PLAN_MARKER_TAG } from "../../core/services/recompaction-offers.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { isExpired } from "../../core/domain/retention.js";
import type { ProcessKey } from "../../core/ports/store.js";
import { findViolations, readAll } from "../invariants.js";
import { inlineTurn, reverter, walker } from "./actors.js";
import { copyOf, deleter, exporter, importer, offerer, onClock, sweeper, type SweepClock } from "./actors-lifecycle.js";
import { scenario, type Scenario } from "./scenario.js";
import type { ScheduleRun } from "./scheduler.js";
import { crashedFoldOverPrior } from "./scenarios-roll-forward.js";
import { addMessages, chat, createProcess, fold, type MessageSpec, type Stage } from "./setup.js";

const DAY_MS = 86_400_000;
/** The checker's retention (actor-deps.ts): every archived original expires this long after its fold. */
const RETENTION_MS = 30 * DAY_MS;

/**
 * Violations of the copy an exporter made, if it made one (a 409 `export.changed` makes none); a
 * file its import refused as inconsistent is one too: an export is a snapshot of a settled process.
 */
async function copyViolations(stage: Stage, run: ScheduleRun): Promise<string[]> {
  const outcome = run.outcomes.get("export");
  if (outcome && !outcome.ok && outcome.error instanceof AppError && outcome.error.code === "import.inconsistent") {
    return [`the export gave a file no settled process could give: ${outcome.error.message}`];
  }
  const deps = stage.deps();
  const copy = copyOf(stage);
  if (!(await deps.store.getProcess(copy))) return [];
  await settledView(deps, copy);
  return findViolations(await readAll(deps.store, copy), { settled: true, noLease: true });
}

/** A settled fold over six messages, and six newer ones: a turn at 0.9 folds again. */
async function foldedWithMore(stage: Stage) {
  await createProcess(stage);
  await addMessages(stage, chat(6, "early"));
  const prior = await fold(stage);
  await addMessages(stage, chat(6, "later"));
  return { prior };
}

/** What the importing scenarios import into, beside the stage's own process (the export's source). */
const importKey = (stage: Stage): ProcessKey => ({ ...stage.key, processId: `${stage.key.processId}-imp` });

async function exportedText(stage: Stage) {
  await foldedWithMore(stage);
  return { text: (await exportPage(stage.deps(), stage.key)).text };
}

/** Nothing of the process is left but its bare tombstone, and no offer of it. */
async function erased(stage: Stage, key: ProcessKey, offer?: string): Promise<string[]> {
  const deps = stage.deps();
  const v: string[] = [];
  const status = await deleteProcess(deps, key).catch(() => null);
  if (status?.status !== "deleted") v.push(`a repeated DELETE of ${key.processId} answers ${JSON.stringify(status)}`);
  const left = await readAll(deps.store, key);
  if (left.messages.length + left.memories.length > 0) v.push(`${key.processId} keeps ${left.messages.length} messages and ${left.memories.length} memories after its DELETE`);
  if (offer && (await deps.store.getInboxItem(key.tenantId, offer))) v.push(`offer ${offer} of ${key.processId} survived its DELETE`);
  return v;
}

export const lifecycleScenarios: Scenario[] = [
  scenario({
    id: "S22",
    title: "an export read page by page (and imported) against a turn's inline fold",
    build: foldedWithMore,
    actors: (stage) => ({ actors: [exporter(stage), inlineTurn(stage)], check: ({ run }) => copyViolations(stage, run) }),
  }),
  scenario({
    id: "S23",
    title: "an export of a process whose fold's roll-forward is unfinished, against the revert of that fold",
    build: crashedFoldOverPrior,
    actors: (stage, { crashed }) => ({ actors: [exporter(stage), reverter(stage, crashed)], check: ({ run }) => copyViolations(stage, run) }),
  }),
  scenario({
    id: "S24",
    title: "an import against a turn that folds the id being imported",
    build: exportedText,
    actors: (stage, { text }) => ({
      actors: [importer(importKey(stage), text), inlineTurn({ ...stage, key: importKey(stage) }, "turn", 0.95)],
      async check() {
        const deps = stage.deps();
        await settledView(deps, importKey(stage));
        return findViolations(await readAll(deps.store, importKey(stage)), { settled: true, noLease: true });
      },
    }),
  }),
  scenario({
    id: "S25",
    title: "an import that crashes before going live, against a turn on its id: hidden, then erased by a DELETE",
    build: exportedText,
    actors: (stage, { text }) => ({
      actors: [importer(importKey(stage), text, { crash: true }), inlineTurn({ ...stage, key: importKey(stage) }, "turn", 0.95)],
      async check() {
        const deps = stage.deps();
        const key = importKey(stage);
        const v: string[] = [];
        if (await deps.store.getProcess(key)) v.push(`the import of ${key.processId} crashed before going live, and it is readable`);
        const listed = await deps.store.listProcesses(key.tenantId, { limit: 1000 });
        if (listed.items.some((p) => p.processId === key.processId)) v.push(`the crashed import ${key.processId} is listed`);
        return [...v, ...(await erased(stage, key))];
      },
    }),
  }),
  scenario({
    id: "S26",
    title: "a DELETE against a plan-completion offer and a turn's inline fold",
    async build(stage) {
      await createProcess(stage);
      const start = Date.now();
      const at = (ms: number) => new Date(start + ms);
      const timed = (specs: MessageSpec[], from: number) => specs.map((m, i) => ({ ...m, at: at(from + i) }));
      await addMessages(stage, [
        ...timed(chat(6, "before"), 1),
        ...timed([{ role: "ASSISTANT", content: "Plan: validate, map, import, report.", tags: [PLAN_MARKER_TAG] }], 10),
        ...timed(chat(6, "step"), 11),
      ]);
      return { completedAt: at(20).toISOString() };
    },
    actors: (stage, { completedAt }) => ({
      actors: [deleter(stage), offerer(stage, completedAt), inlineTurn(stage)],
      ownChecksOnly: true,
      check: () => erased(stage, stage.key, offerId(stage.key.processId, "plan-1")),
    }),
  }),
  scenario({
      id: "S27",
      title: "a revert three leases before its originals expire, against the TTL on a clock that jumps past the expiry, and a walker",
      build: async (stage) => {
        await createProcess(stage);
        await addMessages(stage, chat(10, "early"));
        return { folded: await fold(stage) };
      },
      actors: (stage, { folded }) => {
        // Its own clock per schedule: schedules may run side by side.
        const clock: SweepClock = { late: false };
        const early = RETENTION_MS - 3 * 60_000;
        const late = RETENTION_MS + 60_000;
        return {
          actors: [onClock(reverter(stage, folded), clock, early, late), sweeper(stage, clock, late), onClock(walker(stage), clock, late, late)],
          ownChecksOnly: true,
          // Every original or none: restored, all of them and none with an expiry; or left to the
          // summary, which stays the only record of those the TTL removed.
          async check() {
            const deps = stage.deps();
            await settledView(deps, stage.key);
            const after = await readAll(deps.store, stage.key);
            const memory = after.memories.find((m) => m.id === folded)!;
            const now = new Date(Date.now() + late);
            const kept = memory.sourceRefs.map((id) => after.messages.find((m) => m.id === id)).filter((m) => m && !isExpired(m, now));
            const v: string[] = [];
            if (memory.status === "REVERTED" && kept.length !== memory.sourceRefs.length) {
              v.push(`the revert of ${folded} restored ${kept.length} of its ${memory.sourceRefs.length} originals; the others are gone`);
            }
            if (memory.status === "REVERTED") {
              for (const m of kept) if (m!.archivedInMemoryId !== null || m!.expiresAt !== undefined) v.push(`restored original ${m!.id} is still archived or expiring`);
            }
            const gone = (line: string) => memory.status === "OK" && line.includes(`memory ${folded} folded`) && line.endsWith("which does not exist");
            return [...v, ...findViolations(after, { settled: true, noLease: true }).filter((line) => !gone(line))];
          },
        };
      },
    }),
];

