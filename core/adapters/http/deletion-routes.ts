/**
 * Deleting a process (docs/api.md, "Deleting a process"). Served by the summarizing routes'
 * function because a large process is erased by the compaction worker, which only that function
 * may invoke.
 */
import type { Hono } from "hono";
import type { ServiceDeps } from "../../services/deps.js";
import { deleteProcess } from "../../services/process-deletion.js";
import { processKey, type Env } from "./app.js";

export function deletionRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.delete("/v1/processes/:processId", async (c) => {
    const { status } = await deleteProcess(deps, processKey(c));
    // 204: every item is gone. 202: the worker erases the rest; repeat the DELETE to follow it.
    return status === "deleted" ? c.body(null, 204) : c.json({ status }, 202);
  });
}
