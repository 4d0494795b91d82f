/**
 * clearThreshold and prepareThreshold are checked against the mode thresholds when stored
 * (docs/configuration.md, "Tunables"): a 400 naming the field, and nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService } from "../support/service.js";

type Service = Awaited<ReturnType<typeof startTestService>>;

describe("PUT /v1/settings checks clearThreshold and prepareThreshold against the thresholds", () => {
  let ctx: Service;
  beforeAll(async () => {
    ctx = await startTestService();
  });
  afterAll(async () => ctx?.service.stop());

  it("stores each at its limit and refuses one step past it with tunables.invalid naming the field", async () => {
    const { api } = ctx;
    // Defaults: softThreshold 0.4, emergencyThreshold 0.95.
    for (const [atLimit, past, field] of [
      [{ clearThreshold: 0.4 }, { clearThreshold: 0.399 }, "clearThreshold"],
      [{ clearThreshold: 0.949 }, { clearThreshold: 0.95 }, "clearThreshold"],
      [{ prepareThreshold: 0.4 }, { prepareThreshold: 0.399 }, "prepareThreshold"],
    ] as const) {
      for (const query of ["", "?projectId=p1"]) {
        const refused = await api("PUT", `/v1/settings${query}`, { body: past });
        expect(refused.status).toBe(400);
        expect(refused.body.error.code).toBe("tunables.invalid");
        expect(refused.body.error.details.fields).toEqual([field]);
        expect(refused.body.error.message).toContain(field);
        expect((await api("GET", `/v1/settings${query}`)).body.overrides).not.toMatchObject(past);

        const stored = await api("PUT", `/v1/settings${query}`, { body: atLimit });
        expect(stored.status).toBe(200);
        expect(stored.body.effective).toMatchObject(atLimit);
      }
    }
  });

  it("refuses a project softThreshold that passes the tenant's clearThreshold, naming clearThreshold", async () => {
    const { api } = ctx;
    // The tenant's layer (a PUT replaces it) lies below every project's.
    expect((await api("PUT", "/v1/settings", { body: { clearThreshold: 0.5 } })).status).toBe(200);
    const refused = await api("PUT", "/v1/settings?projectId=p2", { body: { softThreshold: 0.55 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.fields).toEqual(["clearThreshold"]);
    expect((await api("PUT", "/v1/settings?projectId=p2", { body: { softThreshold: 0.55, clearThreshold: 0.55 } })).status).toBe(200);
  });
});
