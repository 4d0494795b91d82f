/**
 * A cursor signed with the right key but naming a start the listing never hands out (what anyone
 * holding a stage's key could build) is a 400 naming the cursor, over HTTP on DynamoDB Local;
 * never DynamoDB's refusal as a 500, and never a forged count in an export's `end` line.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCursorSeal, LOCAL_CURSOR_SECRET } from "../../core/adapters/http/cursors.js";
import { startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
const seal = createCursorSeal(LOCAL_CURSOR_SECRET);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

beforeAll(async () => {
  ctx = await startTestService();
  await ctx.api("PUT", "/v1/processes/adv1", { body: { projectId: "p" } });
  await ctx.api("POST", "/v1/processes/adv1/messages", { body: { role: "USER", content: "hello" } });
}, 60_000);
afterAll(async () => ctx?.service.stop());

describe("a well-signed cursor the listing never handed out", () => {
  it("a message listing's start key outside the messages is a 400 cursor.invalid", async () => {
    const cursor = seal.seal("messages\ntenant-a\nadv1\nall", b64({ pk: "T#tenant-a#P#adv1", sk: "ZZZ" }));
    const res = await ctx.api("GET", `/v1/processes/adv1/messages?cursor=${encodeURIComponent(cursor)}`);
    expect(res).toMatchObject({ status: 400, body: { error: { code: "cursor.invalid", details: { fields: ["query.cursor"] } } } });
  });

  it("an export's start key outside the messages, or a count no process holds, is a 400 cursor.invalid", async () => {
    const scope = "export\ntenant-a\nadv1";
    for (const inner of [{ after: b64({ pk: "T#tenant-a#P#adv1", sk: "S#" }), messages: 1 }, { messages: 1e15 }]) {
      const cursor = seal.seal(scope, b64(inner));
      const res = await ctx.api("GET", `/v1/processes/adv1/export?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status, JSON.stringify(inner)).toBe(400);
      expect(res.body.error.code, JSON.stringify(inner)).toBe("cursor.invalid");
    }
  });
});
