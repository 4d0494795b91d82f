/**
 * What a fold's summary is stored with (docs/summarizers.md, "What a fold lost"): the units it must
 * keep, its loss report and the messages each of its lines came from.
 */
import type { Memory, Message } from "../../domain/model.js";
import { extendLedger } from "../../domain/ledger/build.js";
import { keepsLedger } from "../../domain/ledger/section.js";
import { ledgerEvidenceUnits, ledgerLoss } from "../../domain/ledger/units.js";
import { ledgerBudget, renderLedger } from "../../domain/ledger/render.js";
import type { Tunables } from "../../domain/tunables.js";
import type { NativeContent } from "../../domain/native/formats.js";
import { carriedUnits, importantUnits, unitKey } from "../../domain/salient-units.js";
import { lossFields, sourcesOf } from "./loss-fields.js";
import { estimateTokens } from "../../domain/tokens.js";
import type { ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";

/** A summary that passed the quality gate, as summarizing answers it (./summarize.ts). */
export interface CheckedSummary {
  ok: true;
  text: string;
  /** Summarizer calls it took. */
  calls: number;
  /** Per line of `text`, as the summarizer cited (unchecked). */
  citations?: string[][];
  /** Citations of the lines of earlier chunk outputs, by line text (later chunks may copy them). */
  carried: Map<string, string[]>;
  /** A summarizer call's answer was cut to the budget: what it wrote past it is lost. */
  truncated?: boolean;
  /** A provider fold's block, when one call covered the whole fold, and why there is none otherwise. */
  native?: NativeContent;
  nativeNote?: string;
}

/**
 * What a fold's summary needs before it is written: the prior summary in full, the evidence ledger
 * (the prior's extended by the fold, rendered within the fold's budget) and the units it must keep.
 */
export interface FoldNeeds {
  priorDetail: Memory | null;
  /** What this summary must carry word for word: `keep`, and the folded part's rules and open errors. */
  required: string[];
  /** What later summaries must carry too (`keepUnits`): the units of strong and pinned messages. */
  keep: string[];
  ledger: NonNullable<Memory["ledger"]>;
  section: NonNullable<Memory["metadata"]["ledger"]>;
  /** The ledger of the fold's own messages (what the loss report counts). */
  own: NonNullable<Memory["ledger"]>;
}

export async function foldNeeds(
  deps: ServiceDeps,
  key: ProcessKey,
  prior: Memory | null,
  fold: readonly Message[],
  o: { tunables: Pick<Tunables, "ledgerWindowShare" | "ledgerMaxTokens" | "ledgerTools">; contextWindow: number | undefined },
): Promise<FoldNeeds> {
  const priorDetail = await priorDetailOf(deps, key, prior);
  // The ledger is never summarized away: without the prior's, the fold waits for a later try.
  if (prior?.metadata.ledger && !priorDetail?.ledger) throw new Error(`the evidence ledger of summary ${prior.id} could not be read`);
  const evidence = ledgerOfFold(priorDetail, fold, o);
  const keep = requiredUnits(fold, prior, priorDetail?.keepUnits);
  // The folded part's rules and open errors are required of this summary only: the ledger carries
  // them forward, so later summaries spend no budget on them again.
  const ledgerUnits = ledgerEvidenceUnits(evidence.own).filter((u) => !keep.some((k) => unitKey(k) === unitKey(u)));
  return { priorDetail, ...evidence, required: [...ledgerUnits, ...keep], keep };
}

/** The prior summary's ledger extended by `fold`, its section within the fold's budget, and the fold's own ledger. Pure. */
export function ledgerOfFold(
  prior: Pick<Memory, "ledger" | "metadata"> | null,
  fold: readonly Message[],
  o: { tunables: Pick<Tunables, "ledgerWindowShare" | "ledgerMaxTokens" | "ledgerTools">; contextWindow: number | undefined },
): Pick<FoldNeeds, "ledger" | "section" | "own"> {
  const own = extendLedger(null, fold, o.tunables.ledgerTools);
  const ledger = extendLedger(prior?.ledger, fold, o.tunables.ledgerTools);
  const section = renderLedger(ledger, ledgerBudget(o.tunables, o.contextWindow, prior?.metadata.ledger?.budgetTokens));
  return { ledger, section, own };
}

/** The stored parts of a good summary: its text, tokens, loss report, per-line provenance, required units and ledger. */
export function summaryFields(needs: FoldNeeds, fold: readonly Message[], summary: CheckedSummary) {
  const lost = lossFields(fold, summary.text);
  return {
    content: summary.text,
    tokens: estimateTokens(summary.text) + needs.section.tokens,
    ...lost,
    loss: { ...lost.loss, ...(keepsLedger(needs.own) ? { ledger: ledgerLoss(needs.own, needs.section) } : {}) },
    citations: provenance(needs.priorDetail, fold, summary),
    ...(needs.keep.length > 0 ? { keepUnits: needs.keep } : {}),
    ledger: needs.ledger,
    ledgerSection: needs.section,
    ...(summary.native ? { native: summary.native } : {}),
  };
}

/** At most this many units of the strong and pinned sources of one fold are required of its summary. */
const REQUIRED_UNITS = 25;
/** At most this many required units in all, with those carried from earlier folds. */
const REQUIRED_UNITS_TOTAL = 40;

/**
 * What every later summary must keep too (docs/summarizers.md, "Quality gate"): the units of the
 * strong and pinned messages the fold archives, then those an earlier summary was required to keep
 * and still carries (so they survive every later fold).
 */
function requiredUnits(fold: readonly Message[], prior: Memory | null, priorKeep: readonly string[] | undefined): string[] {
  const own = [...new Set(importantUnits(sourcesOf(fold), REQUIRED_UNITS))];
  const carried = prior && priorKeep ? carriedUnits(prior.content, priorKeep) : [];
  const seen = new Set(own.map(unitKey));
  const out = [...own];
  for (const u of carried) {
    if (out.length >= REQUIRED_UNITS_TOTAL) break;
    if (!seen.has(unitKey(u))) {
      seen.add(unitKey(u));
      out.push(u);
    }
  }
  return out;
}

/**
 * The prior summary as stored in full (its citations and required units live outside the replay
 * index). One read per fold; a failure only loses what they would carry forward.
 */
async function priorDetailOf(deps: ServiceDeps, key: ProcessKey, prior: Memory | null): Promise<Memory | null> {
  if (!prior) return null;
  try {
    return await deps.store.getMemory(key, prior.id);
  } catch (e) {
    deps.log.warn("prior summary detail unavailable", { memoryId: prior.id, error: String(e) });
    return null;
  }
}



export function remember(carried: Map<string, string[]>, text: string, citations: string[][]) {
  text.split("\n").forEach((line, i) => {
    const ids = citations[i];
    if (line.trim() && ids && ids.length > 0) carried.set(line.trim(), ids);
  });
}

/**
 * Per line of the new summary, the messages it came from: the summarizer's citations, checked
 * (ids outside the fold are dropped), plus the citations of an identical line in the prior
 * summary or an earlier chunk's output (a line carried over keeps its sources).
 */
function provenance(
  prior: Memory | null,
  fold: readonly Message[],
  summary: CheckedSummary,
): string[][] {
  const carried = new Map(summary.carried);
  if (prior?.citations) remember(carried, prior.content, prior.citations);
  const inFold = new Set(fold.map((m) => m.id));
  return summary.text.split("\n").map((line, i) => {
    const own = (summary.citations?.[i] ?? []).filter((id) => inFold.has(id));
    const inherited = carried.get(line.trim()) ?? [];
    return [...new Set([...own, ...inherited])];
  });
}
