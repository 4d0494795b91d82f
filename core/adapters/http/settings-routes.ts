/**
 * Tunables overrides of the tenant, or of one project with `?projectId=` (additive to api.md).
 * Reading runs in either HTTP function; saving checks the result against the summarizer's window,
 * so it runs only in the function that summarizes.
 */
import type { Hono } from "hono";
import { TunablesOverride } from "../../domain/tunables.js";
import type { ServiceDeps } from "../../services/deps.js";
import { readSettings, saveSettings } from "../../services/settings.js";
import { tenantOf, type Env } from "./app.js";
import { readBody, readQuery } from "./input.js";
import { SettingsQuery } from "./schemas.js";

export function readSettingsRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.get("/v1/settings", async (c) => {
    const { projectId } = readQuery(c, SettingsQuery);
    return c.json(await readSettings(deps, tenantOf(c), projectId));
  });
}

export function saveSettingsRoutes(app: Hono<Env>, deps: ServiceDeps) {
  app.put("/v1/settings", async (c) => {
    const { projectId } = readQuery(c, SettingsQuery);
    const body = await readBody(c, TunablesOverride);
    return c.json(await saveSettings(deps, tenantOf(c), projectId, body));
  });
}
