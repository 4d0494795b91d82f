/**
 * The contract check is wired into every e2e test's fetch (test/support/service.ts): against a
 * document stricter than the service, a request whose answer it does not describe rejects, an
 * answer it does describe passes, and a violation a caller swallowed still fails at stop.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import { ContractViolation, createContractChecker } from "../support/openapi-contract.js";
import { KEY_A, startTestService } from "../support/service.js";

// The real document, except that `/health` must answer `{ ok: false }`.
const doc = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"));
doc.paths["/health"].get.responses["200"].content["application/json"].schema = {
  type: "object",
  properties: { ok: { const: false } },
  required: ["ok"],
};

const plainFetch = globalThis.fetch;
let ctx: Awaited<ReturnType<typeof startTestService>>;
beforeAll(async () => {
  ctx = await startTestService({ contract: createContractChecker(doc) });
});
afterAll(async () => ctx?.service.stop());

it("rejects the request whose answer the document does not describe, and passes the others", async () => {
  await expect(ctx.api("GET", "/health", { key: null })).rejects.toThrow(ContractViolation);
  await expect(fetch(`${ctx.service.url}/health`)).rejects.toThrow(/GET \/health -> 200: body does not match the document: body\/ok must be equal to constant/);
  const memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
  expect(await memory.upsertProcess("checked-1", { projectId: "p" })).toMatchObject({ processId: "checked-1" });
});

it("fails at stop for a violation a caller swallowed, and gives the plain fetch back", async () => {
  await fetch(`${ctx.service.url}/health`).catch(() => undefined);
  await expect(ctx.service.stop()).rejects.toThrow(/answers docs\/openapi.json does not describe:\nGET \/health -> 200/);
  expect(globalThis.fetch).toBe(plainFetch);
});
