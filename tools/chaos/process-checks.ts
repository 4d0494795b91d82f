/**
 * The per-process checks of a chaos run: the pure invariants over a snapshot (after every
 * operation, and settled at the end), and at the end the replay seen three ways (composeContext,
 * a turn, GET context over the HTTP app) against the newest OK summary plus the active messages.
 */
import { createHttpApp } from "../../core/adapters/http/app.js";
import { staticKeyResolver } from "../../core/adapters/http/auth.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import type { Message } from "../../core/domain/model.js";
import { composeContext } from "../../core/services/context.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { runTurn } from "../../core/services/turn.js";
import { findViolations, readAll, type Snapshot } from "../invariants.js";
import { describe } from "./attempt.js";
import {
  ackedIds,
  activeSetViolations,
  archiveChainViolations,
  expectedBlock,
  expectedSummary,
  ledgerViolations,
  memoryRuleViolations,
  replayViolations,
  toolGroupViolations,
} from "./checks.js";
import { CHAOS_TENANTS } from "./plan.js";
import { violate } from "./report.js";
import { QUIET, where, type ChaosRun, type Container, type Engine } from "./run-state.js";

/** API keys of the chaos tenants, so the HTTP checks go through the same auth as a client. */
const TENANT_KEYS: Record<string, string> = { [CHAOS_TENANTS[0]]: "chaos-key-a", [CHAOS_TENANTS[1]]: "chaos-key-b" };

/** The pure invariants over one snapshot (settled: no crash may still be unfinished). */
export const snapshotViolations = (e: Engine, snapshot: Snapshot, settled: boolean) => [
  ...findViolations(snapshot, { appendedIds: ackedIds(e.ledger), settled, mustStayActive: [...e.pinned], expired: e.expired }),
  ...ledgerViolations(snapshot, e.ledger, e.expired),
  ...memoryRuleViolations(snapshot, e.reweighed, e.expired),
  ...toolGroupViolations(snapshot),
  ...archiveChainViolations(snapshot),
];

/** Per process: every invariant (settled), the replay three ways, and the active set. */
export async function checkProcesses(run: ChaosRun, engines: readonly Engine[], clean: Container, label: string) {
  const { inner, stats } = run;
  const app = createHttpApp({
    deps: clean.deps,
    resolveTenant: staticKeyResolver(new Map(Object.entries(TENANT_KEYS).map(([t, k]) => [k, t]))),
    groups: allRouteGroups,
  });
  for (const e of engines) {
    const key = e.key;
    const snapshot = await readAll(inner, key);
    violate(stats, snapshotViolations(e, snapshot, true));
    const lease = snapshot.state?.lease;
    if (lease && Date.parse(lease.until) > Date.now() + run.clockAheadMs) violate(stats, [`${where(e)}: ${label}: a live lease is left (${lease.owner})`]);
    for (const id of e.memories) {
      if (!snapshot.memories.some((m) => m.id === id) && !e.expired.has(id)) violate(stats, [`${where(e)}: memory ${id} the engine saw is gone`]);
    }
    const expected = { block: await expectedBlock(inner, key, snapshot.memories), summary: expectedSummary(snapshot.memories) };
    try {
      const composed = await composeContext(clean.deps, key, await settledView(clean.deps, key));
      violate(stats, replayViolations(key, composed, expected, `${label} composeContext`));
      const turn = await runTurn(clean.deps, key, QUIET);
      violate(stats, replayViolations(key, turn.context, expected, `${label} turn context`));
      violate(stats, activeSetViolations(key, turn.messages, snapshot.messages, `${label} turn messages`));
      const auth = { headers: { authorization: `Bearer ${TENANT_KEYS[key.tenantId]}` } };
      const res = await app.request(`/v1/processes/${key.processId}/context`, auth);
      const got = (await res.json()) as { block: string; sections: Array<{ name: string; content: string }> };
      if (res.status !== 200) violate(stats, [`${where(e)}: ${label}: GET context answered ${res.status}`]);
      else violate(stats, replayViolations(key, got, expected, `${label} GET context`));
      const active = await app.request(`/v1/processes/${key.processId}/messages?view=active&limit=1000`, auth);
      violate(stats, activeSetViolations(key, ((await active.json()) as { items: Message[] }).items, snapshot.messages, `${label} GET messages?view=active`));
    } catch (err) {
      violate(stats, [`${where(e)}: ${label}: replay check failed: ${describe(err)}`]);
    }
  }
}
