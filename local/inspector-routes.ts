/**
 * The inspector page on the local runner: `/` serves web/index.html and the page's static files
 * are served by path (also under `/web/`), by Hono's `serveStatic` (which refuses `..` and
 * encoded separators, so nothing outside web/ is reachable). No key is needed for the files; the
 * page asks for one. A path that is not a file falls through to the API's JSON 404.
 */
import { serveStatic } from "@hono/node-server/serve-static";
import type { Hono, MiddlewareHandler } from "hono";
import { fileURLToPath } from "node:url";
import type { Env } from "../core/adapters/http/app.js";

const WEB_ROOT = fileURLToPath(new URL("../web/", import.meta.url));

/** On the deployed site config.js carries the API URL; locally the API is on the same origin. */
const LOCAL_CONFIG = "// Local runner: the API is on this origin, so VANCETOPE_API_BASE stays unset.\n";

export function inspectorRoutes(app: Hono<Env>, options: { root?: string } = {}) {
  const files = serveStatic<Env>({ root: options.root ?? WEB_ROOT, rewriteRequestPath: (p) => p.replace(/^\/web(?=\/)/, "") });
  // Read per request and never cached: editing web/ shows on the next reload.
  const fresh: MiddlewareHandler<Env> = async (c, next) => {
    c.header("cache-control", "no-cache");
    return files(c, next);
  };

  for (const prefix of ["", "/web"]) {
    app.get(`${prefix}/config.js`, (c) => c.body(LOCAL_CONFIG, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" }));
  }
  app.get("/web", (c) => c.redirect("/"));
  app.get("/*", fresh);
}
