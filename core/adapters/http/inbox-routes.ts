/** The inbox: list offers, answer one. */
import type { Hono } from "hono";
import { AnswerBody, InboxQuery } from "./schemas.js";
import type { ServiceDeps } from "../../services/deps.js";
import { answerInboxItem, listInbox } from "../../services/inbox.js";
import { tenantOf, type Env } from "./app.js";
import { readBody, readId, readQuery } from "./input.js";

export function inboxRoutes(app: Hono<Env>, deps: ServiceDeps) {
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
