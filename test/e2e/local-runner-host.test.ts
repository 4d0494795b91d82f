/**
 * The local runner answers only requests addressed to the loopback names (localhost, 127.0.0.1,
 * [::1]): a page that rebinds its own domain to 127.0.0.1 sends its own name as `Host` and is
 * refused (421) before any route, the key check included, runs.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  ctx = await startTestService();
}, 60_000);
afterAll(async () => ctx?.service.stop());

/** A GET with a `Host` header of our choosing (fetch does not let one be set). */
function get(path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: ctx.service.port, path, headers: { host, authorization: `Bearer ${KEY_A}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the local runner's Host check", () => {
  it("answers localhost, 127.0.0.1 and [::1] on its port", async () => {
    const port = ctx.service.port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "localhost"]) {
      expect(await get("/v1/processes", host), host).toBe(200);
    }
  });

  it("refuses any other name with 421, on the API, the inspector and /health alike", async () => {
    const port = ctx.service.port;
    for (const host of [`attacker.example:${port}`, "attacker.example", `localhost.attacker.example:${port}`, `127.0.0.1.nip.io:${port}`]) {
      for (const path of ["/v1/processes", "/", "/health"]) expect(await get(path, host), `${host} ${path}`).toBe(421);
    }
  });
});
