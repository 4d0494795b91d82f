/** Messages: append, list, read one, and set one message's strength. */
import type { Hono } from "hono";
import type { ServiceDeps } from "../../services/deps.js";
import { appendMessage, getMessage, listMessages, setMessageStrength } from "../../services/messages.js";
import { cursorsOf, processKey, type Env } from "./app.js";
import { sealPage } from "./cursors.js";
import { readBody, readId, readQuery } from "./input.js";
import { AppendMessageBody, ListMessagesQuery, MAX_MESSAGE_BODY_BYTES, PatchMessageBody } from "./schemas.js";

export function messageRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.post("/v1/processes/:processId/messages", async (c) => {
    const key = processKey(c);
    const body = await readBody(c, AppendMessageBody, MAX_MESSAGE_BODY_BYTES);
    const { message, created } = await appendMessage(deps, key, body);
    return c.json({ message }, created ? 201 : 200);
  });

  app.get("/v1/processes/:processId/messages", async (c) => {
    const key = processKey(c);
    const { cursor, ...query } = readQuery(c, ListMessagesQuery);
    // One listing per tenant, process and view: a cursor of another never opens here.
    const scope = `messages\n${key.tenantId}\n${key.processId}\n${query.view}`;
    const cursors = cursorsOf(c);
    const page = await listMessages(deps, key, { ...query, ...(cursor ? { cursor: cursors.open(scope, cursor) } : {}) });
    return c.json(sealPage(cursors, scope, page));
  });

  app.get("/v1/processes/:processId/messages/:messageId", async (c) => {
    const key = processKey(c);
    return c.json({ message: await getMessage(deps, key, readId(c, "messageId")) });
  });

  app.patch("/v1/processes/:processId/messages/:messageId", async (c) => {
    const key = processKey(c);
    const messageId = readId(c, "messageId");
    const { strength } = await readBody(c, PatchMessageBody);
    return c.json({ message: await setMessageStrength(deps, key, messageId, strength) });
  });
}
