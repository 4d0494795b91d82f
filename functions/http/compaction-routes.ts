/** Routes that may summarize: compaction, range compaction, and the per-turn call. */
import type { Hono } from "hono";
import { CompactionBody, RangeCompactionBody, TurnBody } from "../../core/domain/requests.js";
import { compactManually } from "../../core/services/background.js";
import { compactRange } from "../../core/services/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { runTurn } from "../../core/services/turn.js";
import { tenantOf, type Env } from "./app.js";
import { readBody, readId } from "./input.js";

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

  app.post("/v1/processes/:processId/turns", async (c) => {
    const key = { tenantId: tenantOf(c), processId: readId(c, "processId") };
    const body = await readBody(c, TurnBody);
    return c.json(await runTurn(deps, key, body));
  });
}
