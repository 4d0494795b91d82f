/** Processes: create or update, read, list, and the memory block a turn would replay. */
import type { Hono } from "hono";
import { getContext } from "../../services/context.js";
import type { ServiceDeps } from "../../services/deps.js";
import { listProcesses, requireProcess, upsertProcess } from "../../services/processes.js";
import { cursorsOf, processKey, tenantOf, type Env } from "./app.js";
import { sealPage } from "./cursors.js";
import { readBody, readId, readQuery } from "./input.js";
import { ContextQuery, ListProcessesQuery, PutProcessBody } from "./schemas.js";

export function processRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.put("/v1/processes/:processId", async (c) => {
    const processId = readId(c, "processId");
    const body = await readBody(c, PutProcessBody);
    return c.json({ process: await upsertProcess(deps, tenantOf(c), processId, body) });
  });

  app.get("/v1/processes/:processId", async (c) => {
    const state = await requireProcess(deps, processKey(c));
    return c.json({ process: state.process, ...(state.lastTurn ? { lastTurn: state.lastTurn } : {}) });
  });

  app.get("/v1/processes", async (c) => {
    const { cursor, ...query } = readQuery(c, ListProcessesQuery);
    const tenantId = tenantOf(c);
    // One listing per tenant and project filter.
    const scope = `processes\n${tenantId}\n${query.projectId ?? ""}`;
    const cursors = cursorsOf(c);
    const page = await listProcesses(deps, tenantId, { ...query, ...(cursor ? { cursor: cursors.open(scope, cursor) } : {}) });
    return c.json(sealPage(cursors, scope, page));
  });

  app.get("/v1/processes/:processId/context", async (c) => {
    const key = processKey(c);
    const { query } = readQuery(c, ContextQuery);
    return c.json(await getContext(deps, key, query));
  });
}
