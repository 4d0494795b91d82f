/**
 * Export and import of a process (docs/api.md, "Export and import"): NDJSON out, page by page
 * (the next page's sealed cursor in the `Export-Next-Cursor` header), and NDJSON in, into a new id.
 */
import type { Hono } from "hono";
import type { ServiceDeps } from "../../services/deps.js";
import { decodeExportCursor, encodeExportCursor, exportPage } from "../../services/process-export.js";
import { importProcess } from "../../services/process-import.js";
import { cursorsOf, processKey, type Env } from "./app.js";
import { readQuery, readText } from "./input.js";
import { ExportQuery, ImportQuery } from "./schemas.js";

export const NDJSON = "application/x-ndjson";
/** The response header that carries the next page's cursor; absent on the last page. */
export const NEXT_CURSOR_HEADER = "Export-Next-Cursor";

export function exportRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.get("/v1/processes/:processId/export", async (c) => {
    const key = processKey(c);
    const { cursor } = readQuery(c, ExportQuery);
    // One export per tenant and process: a cursor of another never opens here.
    const scope = `export\n${key.tenantId}\n${key.processId}`;
    const cursors = cursorsOf(c);
    const page = await exportPage(deps, key, cursor ? decodeExportCursor(cursors.open(scope, cursor)) : undefined);
    if (page.next) c.header(NEXT_CURSOR_HEADER, cursors.seal(scope, encodeExportCursor(page.next)));
    c.header("Content-Type", NDJSON);
    return c.body(page.text, 200);
  });

  app.post("/v1/processes/:processId/import", async (c) => {
    const key = processKey(c);
    const { remapIds } = readQuery(c, ImportQuery);
    const text = await readText(c);
    return c.json(await importProcess(deps, key, text, { remapIds }), 201);
  });
}
