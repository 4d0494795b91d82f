/**
 * The inspector's timeline rows for messages with native content (docs/inspector.md, "Native
 * content") in headless Chromium against the local runner: reasoning collapsed with its size,
 * encrypted reasoning only as its size, images as data: URL thumbnails, files and provider items as
 * chips, and hostile strings anywhere in the content shown as text.
 */
import { deflateSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactPath, launchChromium } from "../support/browser.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let browser: Browser;

const PROCESS = "insp-native";
const MANY = "insp-native-many";
const MANY_COUNT = 230;
const HOSTILE = "<img src=x onerror=alert(1)>";
const fmt = (n: number) => n.toLocaleString("en-US");

/** A real PNG (RGB, `width`×`height`, a diagonal gradient), so the browser has something to decode. */
function png(width: number, height: number): string {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * (width * 3 + 1) + 1 + x * 3;
      rows.set([(255 * x) / width, 120, (255 * y) / height], at);
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]).toString("base64");
}

const PNG = png(48, 32);
const THINKING = `The user wants the chart read. ${HOSTILE} must stay text.\nSecond line of the thinking.`;
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB4URj";
const ENCRYPTED = "gAAAAABo" + "Q".repeat(1_200);
const REASONING_SUMMARY = "**Checking the totals**\n\nThe invoice totals match the ledger.";

const ids: Record<string, string> = {};

async function post(processId: string, body: Record<string, unknown>): Promise<string> {
  const r = await ctx.api("POST", `/v1/processes/${processId}/messages`, { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.message.id;
}

beforeAll(async () => {
  ctx = await startTestService();
  browser = await launchChromium();
  await ctx.api("PUT", `/v1/processes/${PROCESS}`, { body: { projectId: "demo", name: "Native content" } });
  ids.image = await post(PROCESS, {
    role: "USER",
    native: {
      format: "anthropic",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        // Neither may become an image: a type that can hold script, and a payload that is no base64.
        { type: "image", source: { type: "base64", media_type: "image/svg+xml", data: Buffer.from('<svg onload="alert(1)"/>').toString("base64") } },
        { type: "image", source: { type: "base64", media_type: "image/png", data: `x" onerror="alert(1)` } },
        { type: "document", title: "Q3 ledger.pdf", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" } },
        { type: "text", text: "What does this chart show?" },
      ],
    },
  });
  ids.thinking = await post(PROCESS, {
    native: {
      format: "anthropic",
      content: [
        { type: "thinking", thinking: THINKING, signature: "EqQBCkYIARgCIkD" + "s".repeat(200) },
        { type: "redacted_thinking", data: REDACTED },
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "ledger totals" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.org", title: HOSTILE }] },
        { type: "brand_new_block", note: HOSTILE, nested: { deep: [HOSTILE] } },
        { type: HOSTILE },
        { type: "text", text: "The chart shows invoice totals per month." },
      ],
    },
  });
  ids.reasoning = await post(PROCESS, {
    native: {
      format: "openai-responses",
      content: [
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: REASONING_SUMMARY }], encrypted_content: ENCRYPTED },
        { type: "reasoning", id: "rs_2", summary: [], encrypted_content: ENCRYPTED },
        { type: "compaction", id: "cmp_1", encrypted_content: "gAAAA-compacted" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Totals match." }] },
      ],
    },
  });
  ids.gemini = await post(PROCESS, {
    role: "ASSISTANT",
    native: {
      format: "gemini",
      content: [
        { text: "Looking at the pixels first.", thought: true },
        { inlineData: { mimeType: "image/png", data: PNG } },
        { text: "Here is the chart again." },
      ],
    },
  });
  ids.aiSdk = await post(PROCESS, {
    role: "ASSISTANT",
    native: {
      format: "ai-sdk",
      content: [
        { type: "reasoning", text: "Short reasoning." },
        { type: "file", mediaType: "text/csv", filename: "totals.csv", data: "bW9udGgsdG90YWwK" },
        { type: "text", text: "Attached the totals." },
      ],
    },
  });

  await ctx.api("PUT", `/v1/processes/${MANY}`, { body: { projectId: "demo", name: "Many native rows" } });
  for (let i = 0; i < MANY_COUNT; i++) {
    await post(MANY, {
      native: { format: "anthropic", content: [{ type: "thinking", thinking: `step ${i}`, signature: "sig" }, { type: "text", text: `answer ${i}` }] },
    });
  }
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

/** Opens the process and records every dialog (an alert() would be script that ran). */
async function open(context: BrowserContext, processId: string): Promise<{ page: Page; dialogs: string[] }> {
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(`${ctx.service.url}/?process=${processId}`);
  await page.locator("#timeline > li.msg-row").first().waitFor();
  return { page, dialogs };
}

describe("inspector: native content", { timeout: 90_000 }, () => {
  it("shows reasoning collapsed, images as thumbnails, chips for the rest, and hostile strings as text", async () => {
    const context = await withKey();
    try {
      const { page, dialogs } = await open(context, PROCESS);
      const row = (id: string) => page.locator(`#msg-${ids[id]}`);

      // Thinking: collapsed, its size in the summary, expanded by a click.
      const thinking = row("thinking").locator("details.native-reasoning").first();
      expect(await thinking.locator("summary").textContent()).toBe(`Thinking · ${fmt(THINKING.length)} chars`);
      expect(await thinking.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      expect(await thinking.locator(".reasoning-text").isVisible()).toBe(false);
      await thinking.locator("summary").click();
      expect(await thinking.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      expect(await thinking.locator(".reasoning-text").isVisible()).toBe(true);
      // The hostile string is text: the same characters back, no element made of it.
      expect(await thinking.locator(".reasoning-text").textContent()).toBe(THINKING);
      expect(await thinking.locator(".reasoning-text *").count()).toBe(0);
      // Reasoning is never in the row's text.
      expect(await row("thinking").locator(".content").textContent()).not.toContain("chart read");

      // Redacted thinking: its size only; the ciphertext is not on the page until asked for.
      const redacted = row("thinking").locator("details.native-reasoning.encrypted");
      expect(await redacted.locator("summary").textContent()).toBe(`Redacted thinking · encrypted, ${fmt(REDACTED.length)} chars`);
      expect(await page.content()).not.toContain(REDACTED);
      await redacted.locator("summary").click();
      expect(await redacted.locator(".native-raw").textContent()).toBe(REDACTED);

      // Provider items the page does not draw: chips with the type name, raw JSON collapsed.
      const chips = row("thinking").locator("details.native-item > summary .native-chip");
      expect(await chips.allTextContents()).toEqual(["server_tool_use · web_search", "web_search_tool_result", "brand_new_block", HOSTILE]);
      const unknown = row("thinking").locator('details.native-item:has(.native-chip[data-type="brand_new_block"])');
      expect(await unknown.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      await unknown.locator("summary").click();
      const raw = await unknown.locator(".native-raw").textContent();
      expect(JSON.parse(raw!)).toEqual({ type: "brand_new_block", note: HOSTILE, nested: { deep: [HOSTILE] } });
      await row("thinking").locator('details.native-item:has(.native-chip[data-type="web_search_tool_result"]) > summary').click();
      // The raw JSON is built on the details' toggle event, which fires after the click returns.
      await row("thinking").locator(".native-raw").nth(2).waitFor();
      expect(await row("thinking").locator(".native-raw").count()).toBe(3);
      expect(await row("thinking").locator(".native *:is(img, script, svg, iframe)").count()).toBe(0);

      // The image: a thumbnail from a data: URL that the browser decoded, at most 96 px.
      const thumbs = row("image").locator("img.native-image");
      expect(await thumbs.count()).toBe(1);
      const thumb = thumbs.first();
      expect(await thumb.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
      expect(await thumb.getAttribute("alt")).toBe("image/png");
      await thumb.scrollIntoViewIfNeeded();
      await expect.poll(() => thumb.evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth)).toBe(48);
      const box = (await thumb.boundingBox())!;
      expect(Math.max(box.width, box.height)).toBeLessThanOrEqual(96);
      // An SVG and a payload that is no base64 become chips, never an <img>; a PDF is a chip.
      expect(await row("image").locator(".native-chip.file").allTextContents()).toEqual([
        "image · image/svg+xml",
        "image · image/png",
        "document · Q3 ledger.pdf · application/pdf",
      ]);

      // OpenAI reasoning: the summary text readable, the encrypted content only as its size.
      const reasoning = row("reasoning").locator("details.native-reasoning");
      expect(await reasoning.locator("summary").allTextContents()).toEqual([
        `Reasoning · ${fmt(REASONING_SUMMARY.length)} chars · encrypted, ${fmt(ENCRYPTED.length)} chars`,
        `Reasoning · encrypted, ${fmt(ENCRYPTED.length)} chars`,
      ]);
      await reasoning.first().locator("summary").click();
      expect(await reasoning.first().locator(".reasoning-text").textContent()).toBe(REASONING_SUMMARY);
      expect(await page.content()).not.toContain(ENCRYPTED);
      expect(await row("reasoning").locator(".native-chip").allTextContents()).toEqual(["compaction"]);
      expect(await row("reasoning").locator(".content").textContent()).toContain("Totals match.");

      // Gemini and AI SDK: thought parts collapsed, an inline image drawn, a CSV as a chip.
      expect(await row("gemini").locator("details.native-reasoning > summary").textContent()).toBe("Thinking · 28 chars");
      expect(await row("gemini").locator("img.native-image").getAttribute("alt")).toBe("image/png");
      expect(await row("aiSdk").locator("details.native-reasoning > summary").textContent()).toBe("Reasoning · 16 chars");
      expect(await row("aiSdk").locator(".native-chip.file").textContent()).toBe("file · totals.csv · text/csv");

      // Nothing hostile became markup anywhere: the only images are the two thumbnails, no script ran.
      expect(await page.locator("#timeline img").count()).toBe(2);
      expect(await page.locator('#timeline img[src="x"]').count()).toBe(0);
      expect(dialogs).toEqual([]);

      // From the top: scrolled, the sticky header would sit across the middle of a full-page shot.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: artifactPath("inspector-native.png"), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it("builds native parts for the drawn page only", async () => {
    const context = await withKey();
    try {
      const { page } = await open(context, MANY);
      await expect.poll(() => page.textContent("#page-info")).toBe(`messages 1–200 of ${MANY_COUNT}`);
      expect(await page.locator("#timeline details.native-reasoning").count()).toBe(200);
      await page.click("#page-next");
      await expect.poll(() => page.textContent("#page-info")).toBe(`messages 201–${MANY_COUNT} of ${MANY_COUNT}`);
      expect(await page.locator("#timeline details.native-reasoning").count()).toBe(MANY_COUNT - 200);
      expect(await page.locator("#timeline details.native-reasoning > summary").first().textContent()).toBe("Thinking · 8 chars");
    } finally {
      await context.close();
    }
  });
});
