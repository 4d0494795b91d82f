/**
 * The inspector's delete button in headless Chromium against the local runner (docs/inspector.md,
 * "Controls"): a confirmation that names the process and deletes nothing until its id is typed, a
 * 204, a 202 followed until the service answers 204, and an error shown without closing the process.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let browser: Browser;

async function seed(processId: string, messages: number) {
  await ctx.api("PUT", `/v1/processes/${processId}`, { body: { projectId: "demo", name: "Warehouse move" } });
  for (let i = 0; i < messages; i++) {
    const r = await ctx.api("POST", `/v1/processes/${processId}/messages`, { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `step ${i}: shelf ${i} to aisle ${i % 7}` } });
    expect(r.status).toBe(201);
  }
}

beforeAll(async () => {
  ctx = await startTestService();
  browser = await launchChromium();
  await seed("del-small", 3);
  await seed("del-big", 24);
  await seed("del-err", 2);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ctx?.service.stop();
});

async function withKey(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.addInitScript((key) => localStorage.setItem("vancetope.apiKey", key), KEY_A);
  context.setDefaultTimeout(10_000);
  return context;
}

/** Opens the process and records the status of every DELETE the page sends. */
async function open(context: BrowserContext, processId: string): Promise<{ page: Page; deletes: number[] }> {
  const page = await context.newPage();
  const deletes: number[] = [];
  page.on("response", (res) => {
    if (res.request().method() === "DELETE") deletes.push(res.status());
  });
  await page.goto(`${ctx.service.url}/?process=${processId}`);
  await page.locator("#timeline > li.msg-row").first().waitFor();
  return { page, deletes };
}

/** Clicks "Delete process…" and types `typed` into the confirmation. */
async function askToDelete(page: Page, typed: string) {
  await page.click("#delete-process");
  await page.locator("#delete-dialog").waitFor({ state: "visible" });
  await page.fill("#delete-input", typed);
}

describe("inspector delete button", { timeout: 90_000 }, () => {
  it("names the process, deletes nothing until its id is typed, then deletes it (204)", async () => {
    const context = await withKey();
    try {
      const { page, deletes } = await open(context, "del-small");
      await askToDelete(page, "del-smal");
      expect(await page.textContent("#delete-message")).toContain("“del-small”");
      expect(await page.isDisabled("#delete-confirm")).toBe(true);
      await page.press("#delete-input", "Enter");
      expect(await page.isVisible("#delete-dialog")).toBe(true);
      await page.click("#delete-cancel");
      expect(await page.isVisible("#delete-dialog")).toBe(false);
      expect((await ctx.api("GET", "/v1/processes/del-small")).status).toBe(200);

      await askToDelete(page, "del-small");
      expect(await page.isDisabled("#delete-confirm")).toBe(false);
      await page.click("#delete-confirm");
      await page.locator("#status", { hasText: "Deleted del-small" }).waitFor();
      expect(deletes).toEqual([204]);
      expect((await ctx.api("GET", "/v1/processes/del-small")).status).toBe(404);
      expect(await page.isVisible("#process-view")).toBe(false);
      expect(await page.locator('#process-select option[value="del-small"]').count()).toBe(0);
      expect(new URL(page.url()).search).toBe("");
    } finally {
      await context.close();
    }
  });

  it("follows a 202 by repeating the DELETE until the service answers 204", async () => {
    // Fewer items erased within the call than the process holds: the worker erases the rest.
    ctx.service.deps.erasure = { inlineItems: 5, batchItems: 5 };
    const context = await withKey();
    try {
      const { page, deletes } = await open(context, "del-big");
      await askToDelete(page, "del-big");
      await page.click("#delete-confirm");
      await page.locator("#status", { hasText: "Deleted del-big" }).waitFor({ timeout: 20_000 });
      expect(deletes[0]).toBe(202);
      expect(deletes.at(-1)).toBe(204);
      expect((await ctx.api("GET", "/v1/processes/del-big")).status).toBe(404);
      expect((await ctx.api("DELETE", "/v1/processes/del-big")).status).toBe(204);
    } finally {
      delete ctx.service.deps.erasure;
      await context.close();
    }
  });

  it("shows an error and keeps the process open", async () => {
    const context = await withKey();
    await context.route("**/v1/processes/del-err", (route) =>
      route.request().method() === "DELETE"
        ? route.fulfill({ status: 500, contentType: "application/json", body: '{"error":{"code":"internal","message":"the table is unavailable"}}' })
        : route.continue(),
    );
    try {
      const { page } = await open(context, "del-err");
      await askToDelete(page, "del-err");
      await page.click("#delete-confirm");
      const status = page.locator("#status.error", { hasText: "Could not delete del-err: the table is unavailable" });
      await status.waitFor();
      expect(await page.isVisible("#process-view")).toBe(true);
      expect((await ctx.api("GET", "/v1/processes/del-err")).status).toBe(200);
    } finally {
      await context.close();
    }
  });
});
