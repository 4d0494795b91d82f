/**
 * The route groups of the function that never summarizes (functions/plain-routes.ts), and the two
 * small groups only it serves: the inbox and history search. A module of its own, so that the bundle
 * of the plain routes never imports the summarizing ones (test/infra/bundle.test.ts).
 */
import type { Hono } from "hono";
import type { ServiceDeps } from "../../services/deps.js";
import { answerInboxItem, listInbox } from "../../services/inbox.js";
import { processKey, tenantOf, type Env, type RouteGroup } from "./app.js";
import { readBody, readId, readQuery } from "./input.js";
import { memoryRoutes } from "./memory-routes.js";
import { messageRoutes } from "./message-routes.js";
import { processRoutes } from "./process-routes.js";
import { AnswerBody, InboxQuery, SearchQuery } from "./schemas.js";
import { readSettingsRoutes } from "./settings-routes.js";

/** The inbox: list offers, answer one. */
function inboxRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.get("/v1/inbox", async (c) => {
    const q = readQuery(c, InboxQuery);
    return c.json({ items: await listInbox(deps, tenantOf(c), q) });
  });

  app.post("/v1/inbox/:itemId/answer", async (c) => {
    const itemId = readId(c, "itemId");
    const { accepted } = await readBody(c, AnswerBody);
    return c.json({ item: await answerInboxItem(deps, tenantOf(c), itemId, accepted) });
  });
}

/** History search and recall: full-text search over every message, and a memory's originals. */
function searchRoutes(app: Hono<Env>, deps: ServiceDeps) {
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

export const plainRouteGroups: RouteGroup[] = [processRoutes, messageRoutes, memoryRoutes, readSettingsRoutes, inboxRoutes, searchRoutes];
