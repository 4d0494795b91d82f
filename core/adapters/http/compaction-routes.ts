/**
 * Routes that may summarize: compaction, range compaction and the per-turn call, and the route
 * groups (with saving settings and deleting a process, which may hand work to the worker) of the function that serves them (functions/summarizing-routes.ts).
 * Export and import never summarize but are served here too: they are rare and not on the
 * latency path, and their code would take the plain routes' bundle past its size target
 * (docs/benchmarks.md, "Cold start").
 */
import type { Hono } from "hono";
import { compactManually } from "../../services/compaction/manual-compaction.js";
import { compactRange } from "../../services/compaction/range-compaction.js";
import { budgetExceededError } from "../../services/compaction/model-budget.js";
import type { ServiceDeps } from "../../services/deps.js";
import { deleteProcess } from "../../services/process-deletion.js";
import { runTurn } from "../../services/turn.js";
import { processKey, type Env, type RouteGroup } from "./app.js";
import { exportRoutes } from "./export-routes.js";
import { readBody } from "./input.js";
import { CompactionBody, MAX_MESSAGE_BODY_BYTES, RangeCompactionBody, TurnBody } from "./schemas.js";
import { saveSettingsRoutes } from "./settings-routes.js";

function compactionRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.post("/v1/processes/:processId/compaction", async (c) => {
    const key = processKey(c);
    const body = await readBody(c, CompactionBody);
    const { status, result } = await compactManually(deps, key, body);
    return c.json(result, status);
  });

  app.post("/v1/processes/:processId/compaction/range", async (c) => {
    const key = processKey(c);
    const body = await readBody(c, RangeCompactionBody);
    const { budget, ...result } = await compactRange(deps, key, body);
    if (budget) throw budgetExceededError(budget, deps.clock.now());
    return c.json(result);
  });

  app.post("/v1/processes/:processId/turns", async (c) => {
    const key = processKey(c);
    const body = await readBody(c, TurnBody, MAX_MESSAGE_BODY_BYTES);
    return c.json(await runTurn(deps, key, body));
  });
}

/**
 * Deleting a process (docs/api.md, "Deleting a process"): served here because a large process is
 * erased by the compaction worker, which only this function may invoke.
 */
function deletionRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.delete("/v1/processes/:processId", async (c) => {
    const { status } = await deleteProcess(deps, processKey(c));
    // 204: every item is gone. 202: the worker erases the rest; repeat the DELETE to follow it.
    return status === "deleted" ? c.body(null, 204) : c.json({ status }, 202);
  });
}

export const summarizingRouteGroups: RouteGroup[] = [compactionRoutes, saveSettingsRoutes, deletionRoutes, exportRoutes];
