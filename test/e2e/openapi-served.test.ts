/**
 * The local runner serves the contract's OpenAPI document without a key, byte for byte the
 * committed docs/openapi.json, and the API reference page rendered from it with Redoc's scripts
 * inlined (no CDN); the inspector links to the page.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  ctx = await startTestService();
});
afterAll(async () => ctx?.service.stop());

describe("GET /openapi.json", () => {
  it("answers the committed document without a key, as JSON", async () => {
    const res = await fetch(`${ctx.service.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.text()).toBe(readFileSync("docs/openapi.json", "utf8"));
  });
});

describe("GET /reference", () => {
  it("renders the document with Redoc, every script inline", async () => {
    const res = await fetch(`${ctx.service.url}/reference`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("<title>Vancetope Memory API reference</title>");
    // Prerendered from the document: its operations are in the page itself.
    expect(html).toContain("One engine turn");
    expect([...html.matchAll(/<script[^>]*\ssrc=/g)]).toEqual([]);
  }, 60_000);

  it("is linked from the inspector page", () => {
    expect(readFileSync("web/index.html", "utf8")).toMatch(/<a [^>]*href="\/reference"/);
  });
});
