/**
 * The inspector page in headless Chromium against the local runner: what a person sees of a
 * process with a compaction, a failed compaction and a range recompaction; the key prompt; search;
 * pinning a message and undoing a compaction; and a 10,000-message history that renders its first rows quickly in a bounded DOM.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { artifactPath, launchChromium, seedBulkHistory } from "../support/browser.js";
import { KEY_A, startTestService } from "../support/service.js";
import { steppingClock } from "../support/stepping-clock.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];
let browser: Browser;
const fake = createFakeSummarizer();
// Every reading a distinct millisecond, so the range window is unambiguous without waiting.
const clock = steppingClock();
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const PROCESS = "insp-1";
const BIG = "insp-big";
const BIG_COUNT = 10_000;

interface Seeded {
  hard: { memoryId: string; compactedMessages: number; tokensBefore: number; tokensAfter: number };
  failedId: string;
  rangeId: string;
}
let seeded: Seeded;

async function say(processId: string, role: string, content: string, extra: Record<string, unknown> = {}) {
  const r = await api("POST", `/v1/processes/${processId}/messages`, { body: { role, content, ...extra } });
  expect(r.status).toBe(201);
  return r.body.message;
}

async function seedProcess(): Promise<Seeded> {
  await api("PUT", `/v1/processes/${PROCESS}`, { body: { projectId: "demo", name: "Frankie", title: "Billing migration" } });
  await say(PROCESS, "USER", "Plan the Postgres migration of the billing database"); // auto-pinned
  await say(PROCESS, "ASSISTANT", "I will start with a schema dump of the invoices table.");
  await say(PROCESS, "USER", "ok", { tags: ["STRENGTH:weak"] });
  await say(PROCESS, "ASSISTANT", "Postgres 16 supports logical replication, so the cut-over can be online.", { tags: ["STRENGTH:strong"] });
  await say(PROCESS, "USER", "Which tables are the biggest?");
  await say(PROCESS, "ASSISTANT", "Let me check.", { toolCalls: [{ id: "call-1", name: "sql", arguments: '{"q":"select relname from pg_class"}' }] });
  await say(PROCESS, "TOOL", "invoices 4.1M rows, payments 2.2M rows", { toolCallId: "call-1" });
  for (let i = 0; i < 5; i++) await say(PROCESS, i % 2 ? "ASSISTANT" : "USER", `Detail ${i} about the replication slots and the migration window`);
  await say(PROCESS, "USER", "What is the rollback plan?");
  const hard = await api("POST", `/v1/processes/${PROCESS}/compaction`, { body: { model: { contextWindow: 128_000 }, force: "HARD" } });
  expect(hard.body).toMatchObject({ compacted: true, mode: "HARD" });

  for (let i = 0; i < 4; i++) await say(PROCESS, i % 2 ? "ASSISTANT" : "USER", `Rollback step ${i}: keep the old primary for a day`);
  fake.script.push({ ok: false, failure: { kind: "provider_unavailable", retryable: true, message: "model overloaded" } });
  const failed = await api("POST", `/v1/processes/${PROCESS}/compaction`, { body: { model: { contextWindow: 128_000 }, force: "HARD" } });
  expect(failed.body).toMatchObject({ compacted: false });
  expect(failed.body.memoryId).toBeDefined();

  const from = (await say(PROCESS, "USER", "Let's plan the DNS cut-over", { tags: ["MODE:plan"] })).createdAt;
  await say(PROCESS, "ASSISTANT", "Lower the TTL to 60 seconds a day before.");
  const to = (await say(PROCESS, "ASSISTANT", "Then switch the CNAME and watch the error rate.")).createdAt;
  // The user moves on: a range never folds the triggering (newest USER) turn.
  await say(PROCESS, "USER", "Agreed. Now the rollback drill.");
  const range = await api("POST", `/v1/processes/${PROCESS}/compaction/range`, { body: { from, to, topicLabel: "dns-cutover" } });
  expect(range.body.compactedMessages).toBeGreaterThan(0);
  // A pasted log makes the replay large enough to cross the thresholds of a small window.
  await say(PROCESS, "USER", `Here is the dry-run log:\n${"copy invoices batch ok, 10000 rows, 0 errors\n".repeat(100)}`);
  await say(PROCESS, "USER", "Good. Anything else for tomorrow?");
  return { hard: hard.body, failedId: failed.body.memoryId, rangeId: range.body.memoryId };
}

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  ctx.service.deps.clock = clock;
  api = ctx.api;
  // Launch first: without Chromium the file fails here with the install hint.
  browser = await launchChromium();
  seeded = await seedProcess();
  await api("PUT", `/v1/processes/${BIG}`, { body: { projectId: "demo", name: "Long session" } });
  await seedBulkHistory(ctx.service, { tenantId: "tenant-a", processId: BIG }, BIG_COUNT, (i) => ({
    role: i % 2 ? "ASSISTANT" : "USER",
    content: `bulk message ${i + 1}: ${i % 2 ? "an answer about step" : "a question about step"} ${i + 1}`,
  }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ctx?.service.stop();
});

/**
 * For polls that wait on a request to the service (a PATCH, an undo): the default 1 s is too short
 * when the whole suite shares two cores; a poll still ends as soon as the page shows the result.
 */
const SERVER_ROUND_TRIP = { timeout: 10_000 };

async function withKey(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.addInitScript((key) => localStorage.setItem("vancetope.apiKey", key), KEY_A);
  // A missing element fails its assertion in seconds, not at the test's timeout.
  context.setDefaultTimeout(10_000);
  return context;
}

const rowsIn = (page: Page) => page.locator("#timeline > li.msg-row");

// Each test loads the page several times in a real browser; alone a test takes a second or two,
// but with the whole suite on two cores the 30 s default has run out.
describe("inspector page", { timeout: 90_000 }, () => {
  it("asks again when API Gateway denies the key (403 from the authorizer)", async () => {
    const context = await browser.newContext();
    // What a deployed stage answers for a key its authorizer denies (docs/deploy.md, "API keys").
    await context.route("**/v1/**", (route) =>
      route.request().headers().authorization === "Bearer denied-key"
        ? route.fulfill({ status: 403, contentType: "application/json", body: '{"message":"Forbidden"}' })
        : route.continue(),
    );
    await context.addInitScript(() => localStorage.getItem("vancetope.apiKey") ?? localStorage.setItem("vancetope.apiKey", "denied-key"));
    const page = await context.newPage();
    try {
      await page.goto(`${ctx.service.url}/?process=${PROCESS}`);
      const dialog = page.locator("#key-dialog");
      await dialog.waitFor({ state: "visible" });
      expect(await page.textContent("#key-message")).toMatch(/rejected \(403\)/);
      expect(await page.evaluate(() => localStorage.getItem("vancetope.apiKey"))).toBeNull();
      await page.fill("#key-input", KEY_A);
      await page.click("#key-form button[type=submit]");
      await rowsIn(page).first().waitFor();
      expect(await dialog.isVisible()).toBe(false);
    } finally {
      await context.close();
    }
  });

  it("asks for the key once, remembers it, and asks again after a 401", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${ctx.service.url}/?process=${PROCESS}`);
      const dialog = page.locator("#key-dialog");
      await dialog.waitFor({ state: "visible" });
      // The local runner hints where its key is (this one runs with MEMORY_API_KEYS set).
      expect(await page.textContent("#key-hint")).toBe("Local runner: use a key from MEMORY_API_KEYS (the npm start banner prints the first).");
      await page.fill("#key-input", KEY_A);
      await page.click("#key-form button[type=submit]");
      await rowsIn(page).first().waitFor();
      // Several requests waited for the key; one prompt answered them all.
      expect(await dialog.isVisible()).toBe(false);
      expect(await page.evaluate(() => localStorage.getItem("vancetope.apiKey"))).toBe(KEY_A);

      await page.reload();
      await rowsIn(page).first().waitFor();
      expect(await dialog.isVisible()).toBe(false);

      await page.evaluate(() => localStorage.setItem("vancetope.apiKey", "revoked-key"));
      await page.reload();
      await dialog.waitFor({ state: "visible" });
      expect(await page.textContent("#key-message")).toMatch(/rejected \(401\)/);
      expect(await page.evaluate(() => localStorage.getItem("vancetope.apiKey"))).toBeNull();
      await page.fill("#key-input", KEY_A);
      await page.click("#key-form button[type=submit]");
      await rowsIn(page).first().waitFor();
      expect(await dialog.isVisible()).toBe(false);
    } finally {
      await context.close();
    }
  });

  it("shows badges, archived rows, the compaction stitches, the range marker, the chain, the gauge and search", async () => {
    // The engine's last turn used a 32,000-token window: the gauge measures against it.
    expect((await api("POST", `/v1/processes/${PROCESS}/turns`, { body: { model: { name: "my-llama", contextWindow: 32_000 } } })).body.compaction.mode).toBe("NONE");
    const context = await withKey();
    const page = await context.newPage();
    try {
      await page.goto(`${ctx.service.url}/?process=${PROCESS}`);
      await rowsIn(page).first().waitFor();
      await page.locator("#chain .memory-row").first().waitFor();

      // Search is in view without scrolling, above the summary chain.
      const [searchBox, chainBox] = [await page.locator("#search-q").boundingBox(), await page.locator("#chain-panel").boundingBox()];
      expect(await page.evaluate(() => window.scrollY)).toBe(0);
      expect(searchBox!.y).toBeGreaterThan(0);
      expect(searchBox!.y + searchBox!.height).toBeLessThanOrEqual(page.viewportSize()!.height);
      expect(searchBox!.y).toBeLessThan(chainBox!.y);

      // The process picker lists it and has it selected.
      expect(await page.inputValue("#process-select")).toBe(PROCESS);

      // Badges: the auto-pinned task, a weak ack, a strong message, an untagged one.
      const first = rowsIn(page).first();
      expect(await first.locator(".badge.role").textContent()).toBe("USER");
      expect(await first.locator(".badge.strength").textContent()).toBe("pinned");
      const weak = page.locator("li.msg-row").filter({ has: page.locator(".strength-weak") });
      expect(await weak.locator(".content").allTextContents()).toEqual(["ok"]);
      expect(await page.locator("li.msg-row", { hasText: "logical replication" }).locator(".badge.strength").textContent()).toBe("strong");
      expect(await page.locator("li.msg-row", { hasText: "Which tables are the biggest?" }).locator(".badge.strength").textContent()).toBe("untagged");

      // Archived rows are greyed and link to their memory; the pinned task stays active.
      const archived = page.locator("li.msg-row.archived");
      expect(await archived.count()).toBe(seeded.hard.compactedMessages + (await rangeFolded()));
      expect(await first.getAttribute("class")).not.toMatch(/archived/);
      expect(await archived.first().locator(".archived-link").getAttribute("href")).toBe(`#mem-${seeded.hard.memoryId}`);

      // The HARD stitch with its numbers; the page's "after" matches what the service returned.
      const hard = page.locator(`li.stitch[data-memory-id="${seeded.hard.memoryId}"]`);
      expect(await hard.locator(".stitch-text").textContent()).toBe(
        `[compaction] HARD · ${seeded.hard.compactedMessages} messages folded · ${fmt(seeded.hard.tokensBefore)} → ${fmt(seeded.hard.tokensAfter)} tokens`,
      );
      // It sits right after the last message it folded.
      const beforeStitch = hard.locator("xpath=preceding-sibling::li[1]");
      expect(await beforeStitch.getAttribute("class")).toMatch(/archived/);
      expect(await beforeStitch.getAttribute("data-id")).toBe(await lastSourceRef(seeded.hard.memoryId));

      const failed = page.locator(`li.stitch.failed[data-memory-id="${seeded.failedId}"]`);
      expect(await failed.textContent()).toMatch(/^\[compaction\] HARD · FAILED, \d+ messages not folded · error: provider_unavailable mem_/);

      const range = page.locator(`li.stitch[data-memory-id="${seeded.rangeId}"]`);
      expect(await range.textContent()).toMatch(/\[compaction\] RANGE "dns-cutover" · \d+ messages folded · [\d,]+ → [\d,]+ tokens/);
      const marker = page.locator("li.msg-row.range-marker");
      expect(await marker.count()).toBe(1);
      expect(await marker.locator(".range-title").textContent()).toBe("Range recompaction: dns-cutover");
      expect(await marker.locator(".badge.tag.range").textContent()).toBe("RECOMPACTION:dns-cutover");

      // Summary chain, newest first: the range summary (active), the FAILED attempt, the superseded HARD one.
      const chain = page.locator("#chain > li.memory-row");
      expect(await chain.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-memory-id")))).toEqual([
        seeded.rangeId,
        seeded.failedId,
        seeded.hard.memoryId,
      ]);
      expect(await chain.nth(0).locator(".state").textContent()).toBe("active (replayed)");
      expect(await chain.nth(1).locator(".status").textContent()).toBe("FAILED");
      expect(await chain.nth(1).locator(".error").textContent()).toBe("error: provider_unavailable");
      expect(await chain.nth(2).locator(".state").textContent()).toBe(`superseded by ${seeded.rangeId}`);
      expect(await chain.nth(2).locator(".facts").textContent()).toContain(`${fmt(seeded.hard.tokensBefore)} → ${fmt(seeded.hard.tokensAfter)} tokens`);

      // What the HARD fold dropped, read on demand, each unit linking to the message that said it.
      const detail = (await api("GET", `/v1/processes/${PROCESS}/memories/${seeded.hard.memoryId}`)).body;
      expect(await chain.nth(2).locator(".facts").textContent()).toContain(`kept ${detail.loss.kept} of ${detail.loss.units} units`);
      await chain.nth(2).locator("details.fidelity > summary").click();
      const droppedRows = chain.nth(2).locator("ul.dropped > li");
      await droppedRows.first().waitFor();
      expect(await droppedRows.count()).toBe(detail.loss.dropped.length);
      expect(await droppedRows.first().locator("code").textContent()).toBe(detail.loss.dropped[0].text);
      // Each unit with the sentence of its source message it came from.
      const said = (await api("GET", `/v1/processes/${PROCESS}/messages/${detail.loss.dropped[0].messageIds[0]}`)).body.message.content as string;
      await expect.poll(() => droppedRows.first().locator("q.unit-sentence").textContent()).not.toBe("");
      const sentence = (await droppedRows.first().locator("q.unit-sentence").textContent())!;
      expect(sentence.toLowerCase()).toContain(detail.loss.dropped[0].text.toLowerCase());
      expect(said.replace(/\s+/g, " ")).toContain(sentence.replace(/…/g, ""));
      const source = detail.loss.dropped[0].messageIds[0];
      await droppedRows.first().locator(".source-link").first().click();
      await page.locator(`#msg-${source}.flash`).waitFor();
      expect(await chain.nth(2).locator("ol.provenance > li").count()).toBe(detail.provenance.length);

      // The gauge: the replay (active summary + active messages) against the thresholds of the
      // window the last turn used, as the service recorded it (not an assumed 128k).
      const replay = await replayTokens(PROCESS);
      await expect.poll(() => page.textContent("#gauge-text")).toContain(
        `Replay ${fmt(replay)} tokens = ${((replay / 32_000) * 100).toFixed(1)}% of 32,000 (its last turn's window) — below soft (40.0%)`,
      );
      expect(await page.textContent("#gauge-text")).toContain("Thresholds: soft 12,800 · hard 27,200 · emergency 30,400.");
      expect(await page.inputValue("#context-window")).toBe("32000");
      // The range stitch's "after" was the replay then; only the last two messages came since.
      const rangeAfter = Number((await range.textContent())!.match(/→ ([\d,]+) tokens/)![1]!.replace(/,/g, ""));
      expect(await rowsIn(page).last().locator(".content").textContent()).toBe("Good. Anything else for tomorrow?");
      const since = await rowsIn(page).evaluateAll((rows) => rows.slice(-2).map((r) => Number(r.querySelector(".tokens")!.textContent!.replace(/\D/g, ""))));
      expect(rangeAfter + since[0]! + since[1]!).toBe(replay);
      expect(replay).toBeGreaterThan(1000);
      // A window typed here overrides the recorded one for this page.
      await page.fill("#context-window", "1000");
      await page.dispatchEvent("#context-window", "change");
      expect(await page.getAttribute("#gauge", "data-zone")).toBe("emergency");
      expect(await page.textContent("#gauge-text")).toContain("of 1,000 (chosen here)");
      await page.fill("#context-window", "128000");
      await page.dispatchEvent("#context-window", "change");
      expect(await page.evaluate(() => localStorage.getItem("vancetope.contextWindow"))).toBe("128000");

      // Search: hits with scores, archived ones marked.
      await page.fill("#search-q", "postgres invoices");
      await page.click("#search-form button[type=submit]");
      await page.locator("#search-results > li.hit").first().waitFor();
      const hits = page.locator("#search-results > li.hit");
      expect(await page.textContent("#search-info")).toMatch(/^\d+ hits for “postgres invoices”$/);
      expect(await hits.locator(".score").allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^score \d+\.\d\d$/)]));
      const archivedHit = hits.filter({ hasText: "schema dump of the invoices table" });
      expect(await archivedHit.locator(".archived-badge").textContent()).toBe("archived");
      expect(await archivedHit.getAttribute("class")).toBe("hit archived");
      const activeHit = hits.filter({ hasText: "Plan the Postgres migration" });
      expect(await activeHit.locator(".archived-badge").count()).toBe(0);
      expect(await activeHit.locator(".badge.strength").textContent()).toBe("pinned");

      await page.screenshot({ path: artifactPath("inspector.png"), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it("pins and unpins an active message, and undoes the active compaction after a confirmation", async () => {
    const UNDO = "insp-undo";
    await api("PUT", `/v1/processes/${UNDO}`, { body: { projectId: "demo", name: "Undo" } });
    for (let i = 0; i < 14; i++) await say(UNDO, i % 2 ? "ASSISTANT" : "USER", `Undo detail ${i} about the invoice export`);
    const fold = await api("POST", `/v1/processes/${UNDO}/compaction`, { body: { model: { contextWindow: 128_000 }, force: "HARD" } });
    expect(fold.body, JSON.stringify(fold.body)).toMatchObject({ compacted: true });
    const later = await say(UNDO, "USER", "Keep this exact wording: export at 02:00 UTC");

    const context = await withKey();
    const page = await context.newPage();
    const dialogs: string[] = [];
    let answer = false;
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });
    try {
      await page.goto(`${ctx.service.url}/?process=${UNDO}`);
      await page.locator("#chain .memory-row").first().waitFor();
      const archivedRows = page.locator("li.msg-row.archived");
      const folded = fold.body.compactedMessages as number;
      expect(folded).toBeGreaterThan(0);
      expect(await archivedRows.count()).toBe(folded);
      // Archived rows offer no pin: they cannot change.
      expect(await archivedRows.locator(".pin-toggle").count()).toBe(0);

      // Pin: the badge changes and the service stored the tag.
      const row = page.locator(`#msg-${later.id}`);
      expect(await row.locator(".badge.strength").textContent()).toBe("untagged");
      await row.locator("button.pin-toggle", { hasText: "pin" }).click();
      await expect.poll(() => row.locator(".badge.strength").textContent(), SERVER_ROUND_TRIP).toBe("pinned");
      expect((await api("GET", `/v1/processes/${UNDO}/messages/${later.id}`)).body.message.tags).toContain("STRENGTH:pinned");
      // Unpin: the tag is gone again.
      await row.locator("button.pin-toggle", { hasText: "unpin" }).click();
      await expect.poll(() => row.locator(".badge.strength").textContent(), SERVER_ROUND_TRIP).toBe("untagged");
      expect((await api("GET", `/v1/processes/${UNDO}/messages/${later.id}`)).body.message.tags.some((t: string) => t.startsWith("STRENGTH:"))).toBe(false);

      // Undo is offered on the active summary only; dismissing the confirmation changes nothing.
      const active = page.locator(`#chain > li.memory-row[data-memory-id="${fold.body.memoryId}"]`);
      expect(await page.locator("#chain button.undo").count()).toBe(1);
      await active.locator("button.undo").click();
      await expect.poll(() => dialogs.length).toBe(1);
      expect(dialogs[0]).toContain(`Undo compaction ${fold.body.memoryId}?`);
      expect(await archivedRows.count()).toBe(folded);
      expect((await api("GET", `/v1/processes/${UNDO}/memories`)).body.items.map((m: any) => m.status)).toEqual(["OK"]);

      // Accepting it reverts: the folded messages are active again, the summary shows as REVERTED.
      answer = true;
      await active.locator("button.undo").click();
      await expect.poll(() => page.textContent("#status"), SERVER_ROUND_TRIP).toBe(`Undone: ${folded} messages are active again.`);
      const reverted = page.locator(`#chain > li.memory-row[data-memory-id="${fold.body.memoryId}"]`);
      await expect.poll(() => reverted.locator(".badge.status").textContent(), SERVER_ROUND_TRIP).toBe("REVERTED");
      expect(await reverted.getAttribute("class")).toContain("reverted");
      expect(await reverted.locator(".state").textContent()).toMatch(/^reverted .*\(never replayed\)$/);
      expect(await page.locator("#chain button.undo").count()).toBe(0);
      expect(await archivedRows.count()).toBe(0);
      expect(await rowsIn(page).count()).toBe(15);
      expect(await page.locator(`li.stitch.reverted[data-memory-id="${fold.body.memoryId}"] .stitch-text`).textContent()).toContain(
        `REVERTED, ${folded} messages restored`,
      );
      const listed = (await api("GET", `/v1/processes/${UNDO}/memories?includeReverted=true`)).body.items;
      expect(listed.map((m: any) => [m.id, m.status])).toEqual([[fold.body.memoryId, "REVERTED"]]);
      expect((await api("GET", `/v1/processes/${UNDO}/messages?view=active&limit=100`)).body.items).toHaveLength(15);
    } finally {
      await context.close();
    }
  });

  it("renders a 10,000-message history a page at a time", async () => {
    const context = await withKey();
    const page = await context.newPage();
    try {
      await page.goto(`${ctx.service.url}/?process=${BIG}`);
      await rowsIn(page).first().waitFor();
      expect(await rowsIn(page).first().locator(".content").textContent()).toBe("bulk message 1: a question about step 1");
      expect(await rowsIn(page).count()).toBe(200);

      // The rest loads behind the first page; the DOM keeps one page of rows.
      await expect.poll(() => page.textContent("#page-info"), { timeout: 60_000, interval: 250 }).toBe("messages 1–200 of 10,000");
      await page.click("#page-last");
      await expect.poll(() => page.textContent("#page-info")).toBe("messages 9,801–10,000 of 10,000");
      expect(await rowsIn(page).last().locator(".content").textContent()).toBe("bulk message 10000: an answer about step 10000");
      const domRows = await page.evaluate(() => document.querySelectorAll("#timeline li").length);
      expect(domRows).toBeLessThanOrEqual(200);
      expect(await page.textContent("#gauge-text")).toMatch(/Replay [\d,]+ tokens .* \+ 10,000 active messages/);

      // A search hit deep in the history opens its page.
      await page.fill("#search-q", "step 5123");
      await page.click("#search-form button[type=submit]");
      // The first search indexes all 10,000 messages (40 pages read); on a loaded machine that takes
      // longer than the default wait. The test asserts where the hit leads, not how fast.
      await page.locator("#search-results > li.hit").first().waitFor({ timeout: 60_000 });
      await page.locator("#search-results > li.hit", { hasText: "bulk message 5123:" }).locator("button.link").click();
      await expect.poll(() => page.textContent("#page-info")).toBe("messages 5,001–5,200 of 10,000");
      expect(await page.locator("li.msg-row.flash .content").textContent()).toContain("bulk message 5123:");
      await page.screenshot({ path: artifactPath("inspector-10k.png") });
    } finally {
      await context.close();
    }
  }, 150_000);

  it("shows a queued-then-prepared background fold in the chain, never as the replayed summary", async () => {
    const id = "insp-prepared";
    await api("PUT", `/v1/processes/${id}`, { body: { projectId: "demo" } });
    await say(id, "USER", "Plan the data-center move.");
    for (let i = 0; i < 14; i++) await say(id, i % 2 ? "USER" : "ASSISTANT", `rack ${i} moves on day ${i % 4}.`);
    // At 75% of the window the turn queues a HARD fold; the in-process worker prepares it.
    const turn = await api("POST", `/v1/processes/${id}/turns`, { body: { model: { contextWindow: 10_000 }, prompt: { tokens: 7_500 } } });
    expect(turn.body.compaction.reason).toBe("compaction_queued");
    await ctx.service.bus.drain();
    const context = await withKey();
    try {
      const page = await context.newPage();
      await page.goto(`${ctx.service.url}/?process=${id}`);
      const row = page.locator(`#chain > li.memory-row.prepared[data-memory-id="${turn.body.compaction.memoryId}"]`);
      await row.waitFor();
      expect(await row.locator(".status").textContent()).toBe("PREPARED");
      expect(await row.locator(".state").textContent()).toBe("prepared for HARD, not replayed (a turn commits it without a model call)");
      expect(await page.locator("li.stitch").count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("serves the page and its files without a key, and a 404 page state for an unknown process", async () => {
    const res = await fetch(`${ctx.service.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await fetch(`${ctx.service.url}/inspector.js`)).headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await fetch(`${ctx.service.url}/web/inspector.css`)).headers.get("content-type")).toMatch(/^text\/css/);
    expect(await (await fetch(`${ctx.service.url}/config.js`)).text()).not.toContain("VANCETOPE_API_BASE =");

    const context = await withKey();
    const page = await context.newPage();
    try {
      await page.goto(`${ctx.service.url}/?process=nobody-here`);
      await page.locator("#status.error").waitFor();
      expect(await page.textContent("#status")).toContain("“nobody-here” was not found");
    } finally {
      await context.close();
    }
  });

  it("marks tool results cleared from the replay, with their size before and after", async () => {
    const id = "insp-clear";
    await api("PUT", `/v1/processes/${id}`, { body: { projectId: "demo", name: "Agent loop" } });
    await say(id, "USER", "Read the whole billing module.");
    for (let i = 0; i < 8; i++) {
      await say(id, "ASSISTANT", "", { toolCalls: [{ id: `r${i}`, name: "read_file", arguments: `{"path":"billing/${i}.ts"}` }] });
      await say(id, "TOOL", `export const rate${i} = 0.${i};\n`.repeat(200), { toolCallId: `r${i}` });
    }
    const turn = await api("POST", `/v1/processes/${id}/turns`, { body: { model: { contextWindow: 16_000 } } });
    // Of 8 results, the newest (not read by the model yet) and those inside the mode's anchor stay.
    expect(turn.body.compaction.clearedMessages).toBe(3);
    const context = await withKey();
    const page = await context.newPage();
    try {
      await page.goto(`${ctx.service.url}/?process=${id}`);
      await rowsIn(page).first().waitFor();
      const cleared = page.locator("#timeline > li.msg-row:has(.badge.cleared)");
      expect(await cleared.count()).toBe(3);
      // The round waits for the next fold (docs/turns.md): the stored results carry it.
      const stored = (await api("GET", `/v1/processes/${id}/messages?view=all&limit=100`)).body.items;
      const first = stored.find((m: { cleared?: unknown }) => m.cleared);
      expect(await cleared.first().locator(".tokens").textContent()).toBe(`${fmt(first.tokens)} tok (was ${fmt(first.cleared.tokens)})`);
      expect(await cleared.first().locator(".badge.cleared").getAttribute("title")).toContain("read_file");
      // The row shows the stored original, not the placeholder.
      expect(await cleared.first().locator(".content").textContent()).toContain("export const rate0");
    } finally {
      await context.close();
    }
  });

  it("takes range markers and the prompt after a fold from the API's fields, deriving neither itself", async () => {
    const context = await withKey();
    const page = await context.newPage();
    const moved = (await api("GET", `/v1/processes/${PROCESS}/messages?limit=1000`)).body.items.find(
      (m: { content: string }) => m.content === "Agreed. Now the rollback drill.",
    );
    // The memory list as the page receives it, with two fields changed: the range compaction names
    // another message as its marker and another prompt size after it; the HARD one names none.
    await page.route(/\/memories\?/, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      for (const m of body.items) {
        if (m.id === seeded.rangeId) Object.assign(m.metadata, { markerMessageId: moved.id, tokensAfter: 4242 });
        if (m.id === seeded.hard.memoryId) delete m.metadata.tokensAfter;
      }
      await route.fulfill({ response, json: body });
    });
    try {
      await page.goto(`${ctx.service.url}/?process=${PROCESS}`);
      await page.locator(`li.stitch[data-memory-id="${seeded.rangeId}"]`).waitFor();
      const marker = page.locator("li.msg-row.range-marker");
      expect(await marker.count()).toBe(1);
      expect(await marker.getAttribute("data-id")).toBe(moved.id);
      expect(await marker.locator(".range-title").textContent()).toBe("Range recompaction: dns-cutover");
      expect(await page.locator(`li.stitch[data-memory-id="${seeded.rangeId}"]`).textContent()).toContain("→ 4,242 tokens");
      expect(await page.locator(`li.stitch[data-memory-id="${seeded.hard.memoryId}"] .stitch-text`).textContent()).toContain(
        `${fmt(seeded.hard.tokensBefore)} → … tokens`,
      );
    } finally {
      await context.close();
    }
  });
});

async function rangeFolded(): Promise<number> {
  const memories = (await api("GET", `/v1/processes/${PROCESS}/memories`)).body.items as any[];
  return memories.find((m) => m.id === seeded.rangeId).metadata.compactedMessages;
}

async function lastSourceRef(memoryId: string): Promise<string> {
  const { memory } = (await api("GET", `/v1/processes/${PROCESS}/memories/${memoryId}/sources`)).body;
  return [...memory.sourceRefs].sort().at(-1);
}

async function replayTokens(processId: string): Promise<number> {
  const active = (await api("GET", `/v1/processes/${processId}/messages?view=active&limit=1000`)).body.items as any[];
  const memories = (await api("GET", `/v1/processes/${processId}/memories?includeSuperseded=false`)).body.items as any[];
  return (memories[0]?.tokens ?? 0) + active.reduce((n, m) => n + m.tokens, 0);
}
