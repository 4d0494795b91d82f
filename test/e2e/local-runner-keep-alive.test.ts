/**
 * The local runner keeps an idle keep-alive connection open longer than a client's pool keeps an
 * idle socket (local/server.ts, `IDLE_CONNECTION_MS`): it says how long in `Keep-Alive`, and a
 * client that honours it (fetch does) closes its idle socket first. With Node's default of 5 s, a
 * request sent on a socket idle for about 5 s could meet the runner closing it: ECONNRESET.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  ctx = await startTestService();
}, 60_000);
afterAll(async () => ctx?.service.stop());

it("says it keeps an idle connection 65 s", async () => {
  const res = await fetch(`${ctx.service.url}/health`);
  await res.text();
  expect(res.headers.get("connection")).toBe("keep-alive");
  expect(res.headers.get("keep-alive")).toBe("timeout=65");
});
