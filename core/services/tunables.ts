/**
 * Resolves the compaction tunables for a process: defaults < deployment env < tenant settings <
 * project settings. Settings items are read from the store and cached per container, so a turn
 * pays for them at most once a minute.
 */
import { mergeTunables, TunablesOverride, type Tunables } from "../domain/tunables.js";
import type { Store } from "../ports/store.js";

export interface TunablesResolver {
  /** Without a project: the tenant-level result. */
  forProcess(tenantId: string, projectId?: string): Promise<Tunables>;
  /** Validates and stores an override; the next resolution sees it. */
  save(tenantId: string, projectId: string | undefined, override: unknown, at: string): Promise<Tunables>;
  read(tenantId: string, projectId: string | undefined): Promise<TunablesOverride>;
}

export function createTunablesResolver(options: {
  store: Store;
  base: Tunables;
  ttlMs?: number;
  now?: () => number;
}): TunablesResolver {
  const ttl = options.ttlMs ?? 60_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; value: Promise<TunablesOverride> }>();

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
      return mergeTunables(options.base, tenant, project);
    },
    async save(tenantId, projectId, override, at) {
      const parsed = TunablesOverride.parse(override);
      const others = projectId ? [await load(tenantId), parsed] : [parsed];
      // Validate the merged result too: an override must not break the threshold ordering.
      const merged = mergeTunables(options.base, ...others);
      await options.store.putSettings(tenantId, projectId, parsed, at);
      cache.delete(`${tenantId}\u0000${projectId ?? ""}`);
      return merged;
    },
    read: (tenantId, projectId) => load(tenantId, projectId),
  };
}
