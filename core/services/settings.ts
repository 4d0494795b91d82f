/**
 * The tunables overrides of a tenant, or of one of its projects (docs/configuration.md, "Tunables"):
 * what is stored and what results once it is layered on the defaults and the deployment's env.
 */
import type { Tunables, TunablesOverride } from "../domain/tunables.js";
import type { ServiceDeps } from "./deps.js";

export interface SettingsView {
  overrides: TunablesOverride;
  effective: Tunables;
}

export async function readSettings(deps: ServiceDeps, tenantId: string, projectId?: string): Promise<SettingsView> {
  return {
    overrides: await deps.tunables.read(tenantId, projectId),
    effective: await deps.tunables.forProcess(tenantId, projectId),
  };
}

/**
 * Stores an override that has already passed `TunablesOverride`. It is checked against the
 * summarizer's window too, so a setting that cannot work is a 400 now rather than a failed
 * compaction later: only the functions that summarize can save settings.
 */
export async function saveSettings(
  deps: ServiceDeps,
  tenantId: string,
  projectId: string | undefined,
  overrides: TunablesOverride,
): Promise<SettingsView> {
  const summarizer = await deps.summarizer();
  const fit = { model: summarizer.model, contextWindow: summarizer.contextWindow };
  const effective = await deps.tunables.save(tenantId, projectId, overrides, deps.clock.now().toISOString(), fit);
  return { overrides, effective };
}
