/**
 * `GET /openapi.json` (core/adapters/http/openapi-route.ts): answers the document without a key,
 * reads it once per container, and does not keep a failed read.
 */
import { describe, expect, it } from "vitest";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { openApiRoute } from "../../core/adapters/http/openapi-route.js";
import { silentLog } from "../../core/adapters/log.js";
import { createDeps } from "../../core/composition/create-deps.js";

function appReading(read: () => Promise<string>) {
  return createHttpApp({ deps: createDeps({ env: {}, log: silentLog }), resolveTenant: () => null, groups: [openApiRoute(read)] });
}

describe("GET /openapi.json", () => {
  it("answers the document as JSON without a key, reading it once", async () => {
    let reads = 0;
    const app = appReading(async () => {
      reads++;
      return '{"openapi":"3.1.0"}';
    });
    for (let i = 0; i < 3; i++) {
      const res = await app.request("/openapi.json");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.text()).toBe('{"openapi":"3.1.0"}');
    }
    expect(reads).toBe(1);
  });

  it("answers 500 without internals when the file cannot be read, and reads again on the next request", async () => {
    let reads = 0;
    const app = appReading(async () => {
      reads++;
      if (reads === 1) throw new Error("ENOENT: /var/task/functions/openapi.json");
      return "{}";
    });
    const failed = await app.request("/openapi.json");
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: { code: "internal", message: "internal error" } });
    const retried = await app.request("/openapi.json");
    expect(retried.status).toBe(200);
    expect(reads).toBe(2);
  });
});
