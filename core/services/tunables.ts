/**
 * Resolves the compaction tunables for a process: defaults < deployment env < tenant settings <
 * project settings. Settings items are read from the store and cached per container, so a turn
 * pays for them at most once a minute.
 */
import { LRUCache } from "lru-cache";
import { AppError } from "../domain/errors.js";
import { checkFitsSummarizer, type SummarizerFit } from "../domain/summarizer-fit.js";
import { checkTenantLimits, withinTenantLimits } from "../domain/tenant-limits.js";
import { mergeTunables, TunablesOverride, type Tunables } from "../domain/tunables.js";
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

/**
 * Stored layers on top of `base`, lenient where `mergeTunables` is strict: each layer was checked
 * against the layers below it when it was saved, but those can change later (a tenant override
 * saved after a project's, a new env). A layer whose thresholds no longer fit between the ones
 * below keeps its other fields and drops its thresholds, so stored settings can never fail every
 * turn of a process with an error its engine cannot fix. Saving stays strict.
 */
export function layerStored(base: Tunables, layers: readonly (TunablesOverride | undefined)[]): Tunables {
  let result = base;
  for (const layer of layers) {
    if (layer === undefined) continue;
    const { softThreshold: _s, hardThreshold: _h, emergencyThreshold: _e, foldTarget: _f, clearThreshold: _c, prepareThreshold: _p, ...rest } = layer;
    // The whole layer; else without the fields checked against other layers (thresholds, and
    // foldTarget, clearThreshold and prepareThreshold against them); else, as a last resort, the
    // layers below alone.
    for (const attempt of [layer, rest, {}]) {
      try {
        result = mergeTunables(result, attempt);
        break;
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
      }
    }
  }
  return result;
}

/** Settings items (tenant or project layers) one container keeps cached. */
const SETTINGS_CACHE_ENTRIES = 1_000;

export function createTunablesResolver(options: {
  store: SettingsStore;
  base: Tunables;
  ttlMs?: number;
  now?: () => number;
}): TunablesResolver {
  const ttl = options.ttlMs ?? 60_000;
  const now = options.now ?? Date.now;
  // Bounded, least recently used out first; entries expire after `ttl` on our own clock (tests
  // move it), which is why the age is checked here and not by the cache.
  const cache = new LRUCache<string, { at: number; value: Promise<TunablesOverride> }>({ max: SETTINGS_CACHE_ENTRIES });

  const load = (tenantId: string, projectId?: string): Promise<TunablesOverride> => {
    const key = `${tenantId}\u0000${projectId ?? ""}`;
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttl) return hit.value;
    // A stored item that no longer validates is ignored rather than breaking every turn.
    const value = options.store
      .getSettings(tenantId, projectId)
      .then((raw) => (raw ? (TunablesOverride.safeParse(raw).data ?? {}) : {}));
    cache.set(key, { at: now(), value });
    value.catch(() => cache.delete(key));
    return value;
  };

  return {
    async forProcess(tenantId, projectId) {
      const [tenant, project] = await Promise.all([load(tenantId), projectId ? load(tenantId, projectId) : undefined]);
      return layerStored(options.base, [tenant, project].map((layer) => layer && withinTenantLimits(layer, options.base)));
    },
    async save(tenantId, projectId, override, at, summarizer) {
      const below = projectId ? layerStored(options.base, [withinTenantLimits(await load(tenantId), options.base)]) : options.base;
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
