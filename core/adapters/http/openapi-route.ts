/**
 * `GET /openapi.json`: the contract's OpenAPI document, without a key. The document is generated
 * at build time (`npm run openapi`, docs/openapi.json) and read from a file: no bundle carries
 * JSON Schema code or the document itself, so serving it costs the functions' cold start nothing.
 * The plain routes' Lambda reads the copy deployed next to its bundle, the local runner docs/.
 */
import type { RouteGroup } from "./app.js";

/** The route group serving the document that `readDocument` returns (read once, on first request). */
export function openApiRoute(readDocument: () => Promise<string>): RouteGroup {
  let document: Promise<string> | undefined;
  return (app) => {
    app.get("/openapi.json", async (c) => {
      document ??= readDocument();
      try {
        return c.body(await document, 200, { "content-type": "application/json; charset=utf-8" });
      } catch (e) {
        // A failed read is not cached: the next request tries again.
        document = undefined;
        throw e;
      }
    });
  };
}
