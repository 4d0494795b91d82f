/**
 * The local runner's config.js (local/inspector-routes.ts): the key dialog's hint names the default
 * key only when the runner takes it, a public, documented value; never a key it was given.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { Env } from "../../core/adapters/http/app.js";
import { inspectorRoutes } from "../../local/inspector-routes.js";

async function config(defaultKey?: string) {
  const app = new Hono<Env>();
  inspectorRoutes(app, { defaultKey });
  const res = await app.request("/config.js");
  expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
  return res.text();
}

describe("the local runner's config.js", () => {
  it("names the default key when the runner takes it", async () => {
    expect(await config("local-dev-key")).toContain('window.VANCETOPE_LOCAL = {"defaultKey":"local-dev-key"};');
  });

  it("names no key when the runner was given its own", async () => {
    const text = await config(undefined);
    expect(text).toContain('window.VANCETOPE_LOCAL = {"defaultKey":null};');
    expect(text).not.toContain("VANCETOPE_API_BASE =");
  });
});
