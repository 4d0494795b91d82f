/** Routes that never summarize: processes, messages, memories. */
import type { Hono } from "hono";
import {
  AppendMessageBody,
  ListMessagesQuery,
  ListProcessesQuery,
  Id,
  PatchMessageBody,
  MemoriesQuery,
  PutProcessBody,
  SettingsQuery,
} from "../../core/domain/requests.js";
import { settledView } from "../../core/services/compaction.js";
import { composeContext } from "../../core/services/context.js";
import { listMemories, memoryDetail } from "../../core/services/memories.js";
import { revertMemory } from "../../core/services/revert.js";
import { appendMessage, getMessage, listMessages, setMessageStrength } from "../../core/services/messages.js";
import { listProcesses, requireProcess, upsertProcess } from "../../core/services/processes.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { tenantOf, type Env } from "./app.js";
import { readBody, readId, readQuery } from "./input.js";
import * as z from "zod";

const ContextQuery = z.object({ query: z.string().max(4000).optional() });

export function coreRoutes(app: Hono<Env>, deps: ServiceDeps) {
  const keyOf = (c: Parameters<typeof tenantOf>[0]) => ({ tenantId: tenantOf(c), processId: readId(c, "processId") });

  app.put("/v1/processes/:processId", async (c) => {
    const processId = readId(c, "processId");
    const body = await readBody(c, PutProcessBody);
    return c.json({ process: await upsertProcess(deps, tenantOf(c), processId, body) });
  });

  app.get("/v1/processes/:processId", async (c) => {
    const state = await requireProcess(deps, keyOf(c));
    return c.json({ process: state.process });
  });

  app.get("/v1/processes", async (c) => {
    const q = readQuery(c, ListProcessesQuery);
    return c.json(await listProcesses(deps, tenantOf(c), q));
  });

  app.post("/v1/processes/:processId/messages", async (c) => {
    const key = keyOf(c);
    const body = await readBody(c, AppendMessageBody);
    const { message, created } = await appendMessage(deps, key, body);
    return c.json({ message }, created ? 201 : 200);
  });

  app.get("/v1/processes/:processId/messages", async (c) => {
    const key = keyOf(c);
    return c.json(await listMessages(deps, key, readQuery(c, ListMessagesQuery)));
  });

  app.get("/v1/processes/:processId/messages/:messageId", async (c) => {
    const key = keyOf(c);
    return c.json({ message: await getMessage(deps, key, readId(c, "messageId")) });
  });

  app.patch("/v1/processes/:processId/messages/:messageId", async (c) => {
    const key = keyOf(c);
    const messageId = readId(c, "messageId");
    const { strength } = await readBody(c, PatchMessageBody);
    const settle = (k: typeof key) => settledView(deps, k);
    return c.json({ message: await setMessageStrength(deps, key, messageId, strength, settle) });
  });

  app.get("/v1/processes/:processId/memories", async (c) => {
    const key = keyOf(c);
    return c.json({ items: await listMemories(deps, key, readQuery(c, MemoriesQuery)) });
  });

  /** One memory with its full loss report and per-line provenance (additive to api.md). */
  app.get("/v1/processes/:processId/memories/:memoryId", async (c) => {
    const key = keyOf(c);
    return c.json(await memoryDetail(deps, key, readId(c, "memoryId")));
  });

  app.post("/v1/processes/:processId/memories/:memoryId/revert", async (c) => {
    const key = keyOf(c);
    return c.json(await revertMemory(deps, key, readId(c, "memoryId")));
  });

  app.get("/v1/processes/:processId/context", async (c) => {
    const key = keyOf(c);
    const { query } = readQuery(c, ContextQuery);
    return c.json(await composeContext(deps, key, await settledView(deps, key), { query }));
  });

  /**
   * Tunables overrides of the tenant, or of one project with `?projectId=` (additive to api.md).
   * PUT lives with the routes that summarize (compaction-routes.ts): it checks against the summarizer.
   */
  app.get("/v1/settings", async (c) => {
    const { projectId } = readQuery(c, SettingsQuery);
    const tenantId = tenantOf(c);
    return c.json({
      overrides: await deps.tunables.read(tenantId, projectId),
      effective: await deps.tunables.forProcess(tenantId, projectId),
    });
  });
}
