/**
 * The evidence ledger in a fold's checks (docs/summarizers.md, "Quality gate" and "What a fold
 * lost"): which of its entries a summary must keep word for word, and how many entries of the
 * folded part the section lists.
 */
import type { Ledger, LedgerSection } from "./model.js";

/** At most this many of the folded part's rules, and of its open errors, are required of its summary. */
export const REQUIRED_RULES = 5;
export const REQUIRED_OPEN_ERRORS = 3;

/**
 * The texts a summary of the folded part must carry: its newest rules the user set, then its
 * newest open errors (`own`: the ledger of the folded messages alone).
 */
export function ledgerEvidenceUnits(own: Ledger): string[] {
  const rules = own.constraints.slice(-REQUIRED_RULES).reverse().map((c) => c.text);
  const open = own.errors.filter((e) => !e.resolvedBy).slice(-REQUIRED_OPEN_ERRORS).reverse().map((e) => e.text);
  return [...rules, ...open];
}

/** The texts an entry is listed by in a section. */
export function entryTexts(l: Ledger): string[] {
  return [...l.files.map((f) => f.path), ...l.commands.map((c) => c.command), ...l.errors.map((e) => e.text), ...l.constraints.map((c) => c.text)];
}

/** The loss report's count: entries the folded part made or updated (`own`), and how many of them `section` lists. */
export function ledgerLoss(own: Ledger, section: Pick<LedgerSection, "text">): { items: number; listed: number } {
  const texts = entryTexts(own);
  return { items: texts.length, listed: texts.filter((t) => section.text.includes(t)).length };
}
