/**
 * The inspector page on the local runner: `/` serves web/index.html and the page's static files
 * are served by name (also under `/web/`). No key is needed for the files; the page asks for one.
 */
import type { Context, Hono } from "hono";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Env } from "../core/adapters/http/app.js";

export const WEB_ROOT = fileURLToPath(new URL("../web/", import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
};

// One path segment of a known type: no slashes or dot-dot can reach outside web/.
const FILE = "{[A-Za-z0-9_-]+\\.(?:html|js|css|svg|png|ico|json)}";

/** On the deployed site config.js carries the API URL; locally the API is on the same origin. */
const LOCAL_CONFIG = "// Local runner: the API is on this origin, so VANCETOPE_API_BASE stays unset.\n";

export function inspectorRoutes(app: Hono<Env>, options: { root?: string } = {}) {
  const root = options.root ?? WEB_ROOT;

  const serve = async (c: Context<Env>, file: string) => {
    let body: Buffer;
    try {
      body = await readFile(path.join(root, file));
    } catch {
      return c.notFound();
    }
    // Read per request and never cached: editing web/ shows on the next reload.
    return c.body(new Uint8Array(body), 200, {
      "content-type": CONTENT_TYPES[path.extname(file)] ?? "application/octet-stream",
      "cache-control": "no-cache",
    });
  };

  app.get("/", (c) => serve(c, "index.html"));
  for (const prefix of ["", "/web"]) {
    app.get(`${prefix}/config.js`, (c) => c.body(LOCAL_CONFIG, 200, { "content-type": CONTENT_TYPES[".js"]!, "cache-control": "no-cache" }));
    app.get(`${prefix}/:file${FILE}`, (c) => serve(c, c.req.param("file")));
  }
  app.get("/web", (c) => c.redirect("/"));
  app.get("/web/", (c) => serve(c, "index.html"));
}
