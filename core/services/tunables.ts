/**
 * Resolves the compaction tunables for a process: defaults < deployment env < tenant settings <
 * project settings. Settings items are read from the store and cached per container, so a turn
 * pays for them at most once a minute.
 */
import { Lru } from "./lru.js";
import { AppError } from "../domain/errors.js";
import { checkFitsSummarizer, type SummarizerFit } from "../domain/summarizer-fit.js";
import { checkTenantLimits, withinTenantLimits } from "../domain/tenant-limits.js";
import { mergeTunables, TunablesOverride, type Tunables } from "../domain/tunables.js";
import type { Log } from "../ports/logger.js";
import type { Metrics } from "../ports/metrics.js";
import type { SettingsStore } from "../ports/store.js";

export interface TunablesResolver {
  /** Without a project: the tenant-level result. */
  forProcess(tenantId: string, projectId?: string): Promise<Tunables>;
  /**
   * Validates and stores an override; the next resolution sees it. It must stay within the tenant
   * limits (`checkTenantLimits`) and, with `summarizer`, fit that summarizer's window
   * (`checkFitsSummarizer`).
   */
  save(tenantId: string, projectId: string | undefined, override: unknown, at: string, summarizer?: SummarizerFit): Promise<Tunables>;
  read(tenantId: string, projectId: string | undefined): Promise<TunablesOverride>;
}

/** Where a stored setting lives: the tenant's item or the project's. */
export type SettingsLayer = "tenant" | "project";

/** A stored field the resolver leaves out, and why (logged and counted, never silently). */
export interface IgnoredSetting {
  field: string;
  reason: string;
}

/** The issues' own messages of a tunables error (its first line otherwise). */
function reasonOf(e: AppError): string {
  const issues = (e.details?.issues as Array<{ message: string }> | undefined) ?? [];
  return issues.length > 0 ? issues.map((i) => i.message).join("; ") : e.message;
}

/**
 * Stored layers on top of `base`, lenient where `mergeTunables` is strict: each layer was checked
 * against the layers below it when it was saved, but those can change later (a tenant override
 * saved after a project's, a new env). A layer whose thresholds no longer fit between the ones
 * below keeps its other fields and drops its thresholds, so stored settings can never fail every
 * turn of a process with an error its engine cannot fix; `ignored` hears of every field dropped,
 * with the layer's index. Saving stays strict.
 */
export function layerStored(
  base: Tunables,
  layers: readonly (TunablesOverride | undefined)[],
  ignored: (index: number, dropped: IgnoredSetting[]) => void = () => {},
): Tunables {
  let result = base;
  layers.forEach((layer, index) => {
    if (layer === undefined) return;
    const { softThreshold: _s, hardThreshold: _h, emergencyThreshold: _e, foldTarget: _f, clearThreshold: _c, prepareThreshold: _p, ...rest } = layer;
    // The whole layer; else without the fields checked against other layers (thresholds, and
    // foldTarget, clearThreshold and prepareThreshold against them); else, as a last resort, the
    // layers below alone.
    let reason = "";
    for (const attempt of [layer, rest, {}]) {
      try {
        result = mergeTunables(result, attempt);
        const dropped = Object.keys(layer).filter((field) => layer[field as keyof TunablesOverride] !== undefined && !(field in attempt));
        if (dropped.length > 0) ignored(index, dropped.map((field) => ({ field, reason })));
        return;
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        reason ||= reasonOf(e);
      }
    }
  });
  return result;
}

/**
 * A stored item as far as it still validates: the fields `TunablesOverride` refuses (a range
 * narrowed, a field renamed) are left out and reported, the others kept. Linear in the item.
 */
export function readStoredOverride(raw: Record<string, unknown>): { override: TunablesOverride; ignored: IgnoredSetting[] } {
  const parsed = TunablesOverride.safeParse(raw);
  if (parsed.success) return { override: parsed.data, ignored: [] };
  const ignored = parsed.error.issues.flatMap((i) =>
    i.code === "unrecognized_keys"
      ? i.keys.map((field) => ({ field, reason: "unknown tunable" }))
      : [{ field: String(i.path[0] ?? "(root)"), reason: i.message }],
  );
  const bad = new Set(ignored.map((i) => i.field));
  const kept = TunablesOverride.safeParse(Object.fromEntries(Object.entries(raw).filter(([field]) => !bad.has(field))));
  return { override: kept.success ? kept.data : {}, ignored };
}

/** Settings items (tenant or project layers) one container keeps cached. */
const SETTINGS_CACHE_ENTRIES = 1_000;

export function createTunablesResolver(options: {
  store: SettingsStore;
  base: Tunables;
  ttlMs?: number;
  now?: () => number;
  /** Where a stored setting left out is logged and counted (docs/configuration.md). */
  log?: Log;
  metrics?: Pick<Metrics, "invalidSetting">;
}): TunablesResolver {
  const ttl = options.ttlMs ?? 60_000;
  const now = options.now ?? Date.now;
  // Bounded, least recently used out first; entries expire after `ttl` on our own clock (tests
  // move it), which is why the age is checked here and not by the cache.
  const cache = new Lru<string, { at: number; value: Promise<TunablesOverride> }>({ maxEntries: SETTINGS_CACHE_ENTRIES });
  // A conflict between layers is met on every resolution: reported once per `ttl`, like a read.
  const reported = new Lru<string, number>({ maxEntries: SETTINGS_CACHE_ENTRIES });

  const report = (tenantId: string, projectId: string | undefined, layer: SettingsLayer, ignored: readonly IgnoredSetting[], once: boolean) => {
    for (const { field, reason } of ignored) {
      const key = [tenantId, projectId ?? "", layer, field, reason].join("\u0000");
      const last = reported.get(key);
      if (once && last !== undefined && now() - last < ttl) continue;
      if (once) reported.set(key, now());
      options.log?.warn("stored setting ignored", { tenantId, ...(projectId !== undefined ? { projectId } : {}), layer, field, reason });
      options.metrics?.invalidSetting(layer, field);
    }
  };

  const load = (tenantId: string, projectId?: string): Promise<TunablesOverride> => {
    const key = `${tenantId}\u0000${projectId ?? ""}`;
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttl) return hit.value;
    // A stored field that no longer validates is left out (and reported) rather than breaking every turn.
    const value = options.store.getSettings(tenantId, projectId).then((raw) => {
      if (!raw) return {};
      const { override, ignored } = readStoredOverride(raw);
      report(tenantId, projectId, projectId ? "project" : "tenant", ignored, false);
      return override;
    });
    cache.set(key, { at: now(), value });
    value.catch(() => cache.delete(key));
    return value;
  };

  /** The stored layers on `base`, reporting the fields a conflict between them leaves out. */
  const resolve = (tenantId: string, projectId: string | undefined, tenant: TunablesOverride, project?: TunablesOverride) =>
    layerStored(
      options.base,
      [tenant, project].map((layer) => layer && withinTenantLimits(layer, options.base)),
      (index, ignored) => report(tenantId, projectId, index === 0 ? "tenant" : "project", ignored, true),
    );

  return {
    async forProcess(tenantId, projectId) {
      const [tenant, project] = await Promise.all([load(tenantId), projectId ? load(tenantId, projectId) : undefined]);
      return resolve(tenantId, projectId, tenant, project);
    },
    async save(tenantId, projectId, override, at, summarizer) {
      const below = projectId ? resolve(tenantId, projectId, await load(tenantId)) : options.base;
      // Validates the override (an `input` error naming the field) and the merged result: an
      // override must not break the threshold ordering.
      const merged = mergeTunables(below, override as TunablesOverride);
      const parsed = TunablesOverride.parse(override);
      checkTenantLimits(parsed, options.base);
      if (summarizer) checkFitsSummarizer(parsed, merged, summarizer);
      await options.store.putSettings(tenantId, projectId, parsed, at);
      cache.delete(`${tenantId}\u0000${projectId ?? ""}`);
      return merged;
    },
    read: (tenantId, projectId) => load(tenantId, projectId),
  };
}
