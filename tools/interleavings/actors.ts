/**
 * The actors the scenarios race: real service calls, each over its own deps. A turn's fold is
 * inline (the turn summarizes) or background (it commits a prepared fold or queues one).
 */
import type { EventDetail } from "../../core/domain/events.js";
import type { MessageInput } from "../../core/domain/fields.js";
import type { Strength } from "../../core/domain/strength.js";
import { clearIfNeeded } from "../../core/services/compaction/clearing.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { runAcceptedOffer } from "../../core/services/recompaction-offers.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { compactForTurn } from "../../core/services/compaction/turn-compaction.js";
import { runTurn } from "../../core/services/turn.js";
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import type { Actor } from "./scenario.js";
import { Crash, WINDOW, type Stage } from "./setup.js";

/** Any reader that settles the view: it finishes whatever roll-forward META names first. */
export const walker = (stage: Stage, name = "walker"): Actor => ({ name, run: (deps) => settledView(deps, stage.key) });

/** Undo of `memoryId` (POST .../memories/{id}/revert). */
export const reverter = (stage: Stage, memoryId: string, name = "revert"): Actor => ({
  name,
  run: (deps) => revertMemory(deps, stage.key, memoryId),
});

/** A turn's compaction step, inline: it folds itself when the prompt is at `ratio` of the window. */
export const inlineTurn = (stage: Stage, name = "turn", ratio = 0.9): Actor => ({
  name,
  run: (deps) => compactIfNeeded(deps, stage.key, { model: { contextWindow: WINDOW }, prompt: { tokens: ratio * WINDOW } }),
});

/**
 * A turn's compaction step in the background mode: below EMERGENCY it asks the worker to commit a
 * due prepared fold, at EMERGENCY it commits it itself; or it queues one.
 */
export const backgroundTurn = (stage: Stage, name = "turn", ratio = 0.9): Actor => ({
  name,
  execution: "background",
  run: (deps) => compactForTurn(deps, stage.key, { model: { contextWindow: WINDOW }, prompt: { tokens: ratio * WINDOW } }),
});

/** `POST .../compaction` with `force` (its budget never runs out in the checker). */
export const manualCompaction = (stage: Stage, name = "manual"): Actor => ({
  name,
  run: (deps) => compactManually(deps, stage.key, { model: { contextWindow: WINDOW }, force: "HARD", instructions: "keep the dates" }),
});

/** One delivery of `CompactionRequested` to the worker, for a prepare job (or `job`). */
export const worker = (stage: Stage, foldId: string, name = "worker", job: "prepare" | "manual" = "prepare"): Actor => ({
  name,
  execution: "background",
  run: (deps) => runQueuedFold(deps, { ...stage.key, foldId, mode: "HARD", job }),
});

/** One delivery of a `commit` job: the worker commits a prepared fold a turn found due. */
export const committer = (stage: Stage, foldId: string, name = "committer"): Actor => ({
  name,
  execution: "background",
  run: (deps) => runQueuedFold(deps, { ...stage.key, foldId, mode: "HARD", job: "commit", promptTokens: 0.9 * WINDOW }),
});

/** PATCH of a message's strength. */
export const pin = (stage: Stage, messageId: string, name = "pin", strength: Strength = "pinned"): Actor => ({
  name,
  run: (deps) => setMessageStrength(deps, stage.key, messageId, strength),
});

/** A clearing round of old tool results at `tokens` of `window` (a turn's first tier). */
export const clearing = (stage: Stage, window: number, tokens: number, name = "clear"): Actor => ({
  name,
  async run(deps) {
    const view = await settledView(deps, stage.key);
    const tunables = await deps.tunables.forProcess(stage.key.tenantId, view.state.process.projectId);
    return clearIfNeeded(deps, stage.key, view, tunables, window, tokens);
  },
});

/**
 * A delivery of `InboxItemAnswered`: queues the accepted offer's range job and, when it queued
 * one, the worker's delivery of its `CompactionRequested` right after.
 */
export const answeredDelivery = (stage: Stage, detail: EventDetail<"InboxItemAnswered">, name = "redeliver"): Actor => ({
  name,
  execution: "background",
  async run(deps) {
    const queued = await runAcceptedOffer(deps, detail);
    if (queued?.reason !== "compaction_queued" || !queued.memoryId) return queued;
    return runQueuedFold(deps, { ...stage.key, foldId: queued.memoryId, mode: "RANGE", job: "range" });
  },
});

/** `POST .../messages` of each body in turn (an engine's tool loop); answers the ids stored. */
export const appender = (stage: Stage, bodies: readonly MessageInput[], name = "append"): Actor => ({
  name,
  async run(deps) {
    const ids: string[] = [];
    for (const body of bodies) ids.push((await appendMessage(deps, stage.key, body)).message.id);
    return ids;
  },
});

/**
 * `POST .../turns` with `format: "anthropic"` (the answer carries `request`), carrying `message`
 * if given, its compaction step at `ratio` of the window, inline or in the background.
 */
export const formatTurn = (
  stage: Stage,
  o: { name?: string; ratio?: number; execution?: "inline" | "background"; message?: MessageInput } = {},
): Actor => ({
  name: o.name ?? "turn",
  execution: o.execution ?? "background",
  run: (deps) =>
    runTurn(deps, stage.key, {
      model: { contextWindow: WINDOW },
      prompt: { tokens: (o.ratio ?? 0.9) * WINDOW },
      format: "anthropic",
      ...(o.message ? { message: o.message } : {}),
    }),
});

/**
 * `actor` in a container that dies at its first message write: the store's `appendMessage` (and
 * every store call after it) throws {@link Crash} before it reaches DynamoDB, so what ran before
 * (reads, the blob puts of native content) happened and the write never does. Answers `crashed`
 * and the blobs the process holds at that moment.
 */
export const crashingAtAppend = (stage: Stage, actor: Actor): Actor => ({
  ...actor,
  async run(deps) {
    let dead = false;
    const store = new Proxy(deps.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (property === "appendMessage") dead = true;
          if (dead) return Promise.reject(new Crash());
          return value.apply(target, args);
        };
      },
    });
    try {
      await actor.run({ ...deps, store } as ServiceDeps);
    } catch (e) {
      if (e instanceof Crash) return { crashed: true, blobs: await stage.blobs.list(stage.key) };
      throw e;
    }
    return { crashed: false };
  },
});
