/**
 * The inspector page on the local runner: `/` serves web/index.html and the page's static files
 * are served by path (also under `/web/`), by Hono's `serveStatic` (which refuses `..` and
 * encoded separators, so nothing outside web/ is reachable). No key is needed for the files; the
 * page asks for one. A path that is not a file falls through to the API's JSON 404.
 * `/reference` is the API reference: docs/openapi.json rendered by Redoc.
 */
import { serveStatic } from "@hono/node-server/serve-static";
import type { Hono, MiddlewareHandler } from "hono";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { redocly } from "../tools/openapi/redocly.js";
import type { Env } from "../core/adapters/http/app.js";

const WEB_ROOT = fileURLToPath(new URL("../web/", import.meta.url));
/** The generated OpenAPI document (`npm run openapi`): `GET /openapi.json` serves it, `/reference` renders it. */
export const OPENAPI_DOCUMENT = fileURLToPath(new URL("../docs/openapi.json", import.meta.url));

/**
 * On the deployed site config.js carries the API URL; locally the API is on the same origin, and
 * the key dialog gets a hint: the default key when the runner uses it (a documented, public
 * value), else where the runner prints its key.
 */
const localConfig = (defaultKey: string | undefined) =>
  "// Local runner: the API is on this origin, so VANCETOPE_API_BASE stays unset.\n" +
  `window.VANCETOPE_LOCAL = ${JSON.stringify({ defaultKey: defaultKey ?? null })};\n`;

/**
 * The API reference page: `redocly build-docs` renders docs/openapi.json with Redoc's scripts
 * inlined from the npm package (nothing from a CDN), once, on the first request (a few seconds),
 * and the page is kept. A failed build is not kept: the next request tries again.
 */
function referenceRoutes(app: Hono<Env>, documentPath: string) {
  let page: Promise<string> | undefined;
  app.get("/reference", async (c) => {
    page ??= buildReference(documentPath).catch((e: unknown) => {
      page = undefined;
      throw e;
    });
    return c.html(await page);
  });
}

async function buildReference(documentPath: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "vtm-reference-"));
  try {
    const out = path.join(dir, "reference.html");
    const built = await redocly(["build-docs", documentPath, "--inlineBundle", "--title", "Vancetope Memory API reference", "-o", out]);
    if (built.code !== 0) throw new Error(`redocly build-docs failed: ${built.stderr.slice(0, 2000)}`);
    return await readFile(out, "utf8");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `defaultKey`: the runner's key when it is the default one (MEMORY_API_KEYS unset), for the key dialog's hint. */
export function inspectorRoutes(app: Hono<Env>, options: { root?: string; document?: string; defaultKey?: string | undefined } = {}) {
  const config = localConfig(options.defaultKey);
  const files = serveStatic<Env>({ root: options.root ?? WEB_ROOT, rewriteRequestPath: (p) => p.replace(/^\/web(?=\/)/, "") });
  // Read per request and never cached: editing web/ shows on the next reload.
  const fresh: MiddlewareHandler<Env> = async (c, next) => {
    c.header("cache-control", "no-cache");
    return files(c, next);
  };

  for (const prefix of ["", "/web"]) {
    app.get(`${prefix}/config.js`, (c) => c.body(config, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" }));
  }
  app.get("/web", (c) => c.redirect("/"));
  referenceRoutes(app, options.document ?? OPENAPI_DOCUMENT);
  app.get("/*", fresh);
}
