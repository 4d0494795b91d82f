/** History search and recall: full-text search over every message, and a memory's originals. */
import type { Hono } from "hono";
import { SearchQuery } from "./schemas.js";
import type { ServiceDeps } from "../../services/deps.js";
import { processKey, type Env } from "./app.js";
import { readId, readQuery } from "./input.js";

export function searchRoutes(app: Hono<Env>, deps: ServiceDeps) {
  // One index cache per container, shared with the recall section of the context.
  const history = deps.history;

  app.get("/v1/processes/:processId/history/search", async (c) => {
    const key = processKey(c);
    return c.json(await history.search(deps, key, readQuery(c, SearchQuery)));
  });

  /** The messages a memory folded (its `sourceRefs`), oldest first (additive to api.md). */
  app.get("/v1/processes/:processId/memories/:memoryId/sources", async (c) => {
    const key = processKey(c);
    return c.json(await history.sources(deps, key, readId(c, "memoryId")));
  });
}
