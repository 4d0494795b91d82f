/**
 * The data-lifecycle actors (docs/api.md, "Export and import" and "Deleting a process"): an export
 * read page by page and imported into a copy, an import, a delete, a plan-completion offer, and a
 * TTL sweeper on a clock that jumps past the originals' expiry.
 */
import { DeleteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { processPk, TTL_ATTRIBUTE } from "../../core/adapters/dynamodb/keys.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { offerRecompaction } from "../../core/services/recompaction-offers.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { exportPage, type ExportCursor } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import type { Actor } from "./scenario.js";
import { Crash, type Stage } from "./setup.js";

/** Small pages, so that an export spans many requests another actor can come between. */
const PAGED = { pageBytes: 1, readMessages: 3 };

/** Every page of the export of `key`, followed by its cursors. */
async function exportAll(deps: ServiceDeps, key: ProcessKey): Promise<string> {
  let text = "";
  let cursor: ExportCursor | undefined;
  do {
    const page = await exportPage(deps, key, cursor, PAGED);
    text += page.text;
    cursor = page.next;
  } while (cursor);
  return text;
}

/** The copy an exporter imports its export into. */
export const copyOf = (stage: Stage): ProcessKey => ({ ...stage.key, processId: `${stage.key.processId}-copy` });

/** `GET .../export`, page by page, then `POST .../import` of it into {@link copyOf} (a 409 `export.changed` ends it). */
export const exporter = (stage: Stage, name = "export"): Actor => ({
  name,
  async run(deps) {
    const text = await exportAll(deps, stage.key);
    return importProcess({ ...deps, importsPerMinute: 1_000 }, copyOf(stage), text, { remapIds: false });
  },
});

/**
 * `POST .../import` of `text` into `key`; with `crash`, the container dies at the import's last
 * step (every item written, the process still hidden) and the actor answers `crashed`.
 */
export const importer = (key: ProcessKey, text: string, o: { crash?: boolean; name?: string } = {}): Actor => ({
  name: o.name ?? "import",
  async run(deps) {
    const store = o.crash
      ? { ...deps.store, activateImportedProcess: () => Promise.reject(new Crash()) }
      : deps.store;
    try {
      return await importProcess({ ...deps, store, importsPerMinute: 1_000 } as ServiceDeps, key, text, { remapIds: false });
    } catch (e) {
      if (e instanceof Crash) return { crashed: true };
      throw e;
    }
  },
});

/** `DELETE /v1/processes/{id}`. */
export const deleter = (stage: Stage, name = "delete"): Actor => ({ name, run: (deps) => deleteProcess(deps, stage.key) });

/** A `PlanCompleted` delivery: the offer to fold the plan's topic. */
export const offerer = (stage: Stage, completedAt: string, name = "offer"): Actor => ({
  name,
  run: (deps) => offerRecompaction(deps, { ...stage.key, planId: "plan-1", topicLabel: "billing importer", completedAt }),
});

/** A clock the sweeper moves: `late` once it ran. */
export interface SweepClock {
  late: boolean;
}

/**
 * DynamoDB's TTL on a clock that jumps `jumpMs` ahead: its first read moves the clock, then it
 * deletes every item of the process whose TTL is due, one request at a time (each a step of the
 * schedule, as the TTL's own deletes are not one write either).
 */
export const sweeper = (stage: Stage, clock: SweepClock, jumpMs: number, name = "ttl"): Actor => ({
  name,
  async run(_deps, held) {
    const client = held ?? stage.world.client;
    const { tableName } = stage.world;
    const out = await client.send(new QueryCommand({ TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": processPk(stage.key) }, ConsistentRead: true }));
    // The clock jumps as this read is answered: its place in the schedule.
    clock.late = true;
    const dueBy = (Date.now() + jumpMs) / 1000;
    const due = (out.Items ?? []).filter((i) => typeof i[TTL_ATTRIBUTE] === "number" && (i[TTL_ATTRIBUTE] as number) <= dueBy);
    // As DynamoDB's TTL does, an item is deleted only while its TTL is still due (a write since may have removed it).
    for (const i of due) {
      const still = { ConditionExpression: "#ttl <= :due", ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE }, ExpressionAttributeValues: { ":due": dueBy } };
      await client.send(new DeleteCommand({ TableName: tableName, Key: { pk: i.pk, sk: i.sk }, ...still })).catch((e: unknown) => {
        if ((e as Error).name !== "ConditionalCheckFailedException") throw e;
      });
    }
    return { deleted: due.length };
  },
});

/** `actor` on a clock `earlyMs` ahead of the wall clock, `lateMs` once the sweeper ran. */
export const onClock = (actor: Actor, clock: SweepClock, earlyMs: number, lateMs: number): Actor => ({
  ...actor,
  run: (deps) => actor.run({ ...deps, clock: { now: () => new Date(Date.now() + (clock.late ? lateMs : earlyMs)) } }),
});
