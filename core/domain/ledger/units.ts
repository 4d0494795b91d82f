/**
 * The evidence ledger in a fold's checks (docs/summarizers.md, "Quality gate" and "What a fold
 * lost"): which of its entries a summary must keep word for word, and how many entries of the
 * folded part the section lists.
 */
import { carrierText, carries, unitKey } from "../salient-units.js";
import type { Ledger } from "./model.js";
import type { LedgerSection } from "./section.js";

/** At most this many of the folded part's rules, and of its open errors, are required of its summary. */
export const REQUIRED_RULES = 3;
export const REQUIRED_OPEN_ERRORS = 2;
/** Longer rules and error lines are not required word for word (a summary may shorten them; the ledger keeps them). */
export const REQUIRED_MAX_CHARS = 120;

/**
 * A text as the quality gate compares it: punctuation that ends a word dropped, blanks collapsed
 * (the gate reads a summary the same way, core/domain/salient-units.ts `carrierText`).
 *
 * @example gateForm("TypeError: x is not a function.") // "TypeError x is not a function"
 */
export function gateForm(text: string): string {
  return text.replace(/[.,;:!?()"“”`]+(?=\s|$)/g, "").replace(/\s+/g, " ").trim();
}

/**
 * The texts a summary of the folded part must carry: its newest rules the user set, then its
 * newest open errors (`own`: the ledger of the folded messages alone), each in its gate form;
 * only those a summary can carry as written.
 */
export function ledgerEvidenceUnits(own: Ledger): string[] {
  const rules = own.constraints.slice(-REQUIRED_RULES).reverse().map((c) => c.text);
  const open = own.errors.filter((e) => !e.resolvedBy).slice(-REQUIRED_OPEN_ERRORS).reverse().map((e) => e.text);
  return [...rules, ...open]
    .filter((t) => t.length <= REQUIRED_MAX_CHARS)
    .map(gateForm)
    .filter((u) => u.length >= 8 && carries(carrierText(u), { key: unitKey(u) }));
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
