/** Memories: list a process's summaries, read one with its loss report, revert one. */
import type { Hono } from "hono";
import type { ServiceDeps } from "../../services/deps.js";
import { listMemories, memoryDetail } from "../../services/memories.js";
import { revertMemory } from "../../services/compaction/revert.js";
import { processKey, type Env } from "./app.js";
import { readId, readQuery } from "./input.js";
import { MemoriesQuery } from "./schemas.js";

export function memoryRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.get("/v1/processes/:processId/memories", async (c) => {
    const key = processKey(c);
    return c.json({ items: await listMemories(deps, key, readQuery(c, MemoriesQuery)) });
  });

  /** One memory with its full loss report and per-line provenance (additive to api.md). */
  app.get("/v1/processes/:processId/memories/:memoryId", async (c) => {
    const key = processKey(c);
    return c.json(await memoryDetail(deps, key, readId(c, "memoryId")));
  });

  app.post("/v1/processes/:processId/memories/:memoryId/revert", async (c) => {
    const key = processKey(c);
    return c.json(await revertMemory(deps, key, readId(c, "memoryId")));
  });
}
