/** The evidence ledger's invariants, part of tools/invariants.ts's `findViolations`. */
import { ledgerMessageIds } from "../core/domain/ledger/model.js";
import { renderLedger } from "../core/domain/ledger/render.js";
import type { Memory } from "../core/domain/model.js";

/**
 * The evidence ledger of each OK summary (docs/evidence-ledger.md, "The evidence ledger") cites only
 * messages the process holds and its summary stands for (its own or an earlier fold's sources), and
 * its replayed section is the ledger rendered within the section's budget, with the tokens it costs.
 * `messageIds`: every message of the process, archived included; `expired`: originals the TTL removed.
 */
export function ledgerViolations(
  okMemories: readonly Memory[],
  memoryById: ReadonlyMap<string, Memory>,
  messageIds: { has(id: string): boolean },
  expired?: { has(id: string): boolean },
): string[] {
  const v: string[] = [];
  for (const m of okMemories) {
    const section = m.metadata.ledger;
    if (!m.ledger) {
      if (section) v.push(`memory ${m.id} replays a ledger section but keeps no ledger`);
      continue;
    }
    const covered = new Set<string>();
    const seen = new Set<string>();
    for (let x: Memory | undefined = m; x && !seen.has(x.id); x = memoryById.get(x.metadata.supersededMemoryId ?? "")) {
      seen.add(x.id);
      for (const id of x.sourceRefs) covered.add(id);
    }
    const cited = ledgerMessageIds(m.ledger);
    // An original past its retention is gone by design; the ledger keeps what it said.
    const missing = cited.filter((id) => !messageIds.has(id) && !expired?.has(id));
    if (missing.length > 0) v.push(`memory ${m.id}'s ledger cites messages the process does not hold: ${missing.slice(0, 5).join(", ")}`);
    const foreign = cited.filter((id) => !covered.has(id));
    if (foreign.length > 0) v.push(`memory ${m.id}'s ledger cites messages it does not stand for: ${foreign.slice(0, 5).join(", ")}`);
    if (!section) {
      v.push(`memory ${m.id} keeps a ledger without its section`);
      continue;
    }
    const rendered = renderLedger(m.ledger, section.budgetTokens);
    if (rendered.text !== section.text || rendered.tokens !== section.tokens) v.push(`memory ${m.id}'s ledger section is not its ledger rendered within ${section.budgetTokens} tokens`);
    if (section.tokens > section.budgetTokens) v.push(`memory ${m.id}'s ledger section takes ${section.tokens} tokens, past its budget of ${section.budgetTokens}`);
  }
  return v;
}

