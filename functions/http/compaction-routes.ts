/** Routes that may summarize: compaction, range compaction, the per-turn call, and storing settings. */
import type { Hono } from "hono";
import { CompactionBody, RangeCompactionBody, SettingsQuery, TurnBody } from "../../core/domain/requests.js";
import { TunablesOverride } from "../../core/domain/tunables.js";
import { compactManually } from "../../core/services/background.js";
import { compactRange } from "../../core/services/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { runTurn } from "../../core/services/turn.js";
import { tenantOf, type Env } from "./app.js";
import { readBody, readId, readQuery } from "./input.js";

export function compactionRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.post("/v1/processes/:processId/compaction", async (c) => {
    const key = { tenantId: tenantOf(c), processId: readId(c, "processId") };
    const body = await readBody(c, CompactionBody);
    const { status, result } = await compactManually(deps, key, body);
    return c.json(result, status);
  });

  app.post("/v1/processes/:processId/compaction/range", async (c) => {
    const key = { tenantId: tenantOf(c), processId: readId(c, "processId") };
    const body = await readBody(c, RangeCompactionBody);
    return c.json(await compactRange(deps, key, body));
  });

  /**
   * Stores tunables overrides (GET is in core-routes.ts). Here, with the summarizer at hand, so a
   * setting that cannot work with its window is a 400 now rather than a failed compaction later.
   */
  app.put("/v1/settings", async (c) => {
    const { projectId } = readQuery(c, SettingsQuery);
    const body = await readBody(c, TunablesOverride);
    const summarizer = await deps.summarizer();
    const fit = { model: summarizer.model, contextWindow: summarizer.contextWindow };
    const effective = await deps.tunables.save(tenantOf(c), projectId, body, deps.clock.now().toISOString(), fit);
    return c.json({ overrides: body, effective });
  });

  app.post("/v1/processes/:processId/turns", async (c) => {
    const key = { tenantId: tenantOf(c), processId: readId(c, "processId") };
    const body = await readBody(c, TurnBody);
    return c.json(await runTurn(deps, key, body));
  });
}
