/**
 * The chaos plan: every operation each simulated engine runs, with its parameters, the store fault
 * it meets, the summarizer outcomes it gets and how often its events are delivered, all drawn
 * from one seed before anything runs. Values that only exist at run time (which messages a range
 * covers, which memory a replayed roll-forward names) are planned as fractions of what is there.
 *
 * The shape of a plan is in plan-model.ts (re-exported here), the draws in plan-draws.ts and one
 * engine's share in plan-engine.ts.
 */
import { addDeletes } from "./plan-deletes.js";
import { addLifecycle } from "./plan-lifecycle.js";
import { planEngine } from "./plan-engine.js";
import type { PlanCounters } from "./plan-draws.js";
import { CHAOS_TENANTS, type ChaosPlan, type EnginePlan, type PlanOptions } from "./plan-model.js";
import { createRng, digest } from "./rng.js";

export * from "./plan-model.js";

export const defaultEngines = (turns: number) => Math.max(4, Math.min(8, 2 * Math.round(turns / 80)));

export function planChaos(options: PlanOptions): ChaosPlan {
  const seed = options.seed >>> 0;
  const root = createRng(seed);
  const engineCount = Math.max(2, options.engines ?? defaultEngines(options.turns));
  const leaseMs = options.leaseMs ?? 250;
  const counters: PlanCounters = { opId: 0, nonce: 0 };

  const engines: EnginePlan[] = [];
  const stalls = options.stalls ?? true;
  for (let e = 0; e < engineCount; e++) engines.push(planEngine(root, { index: e, engineCount, turns: options.turns, stalls }, counters));
  addDeletes(root, engines, stalls);
  addLifecycle(root, engines, stalls);

  const tenantSettings = {
    // A retention too: every fold of this tenant sets the originals' expiry the invariants check.
    [CHAOS_TENANTS[1]]: { keepRecent: 6, softAnchor: 6, hardAnchor: 3, emergencyAnchor: 2, summaryMaxTokens: 60, retentionDays: 30 },
  };
  // Without stalls the body (and so the digest) is the one from before stalls existed.
  const body = { seed, turns: options.turns, leaseMs, ...(stalls ? { stalls: true as const } : {}), tenantSettings, engines };
  return { ...body, digest: digest(body) };
}
