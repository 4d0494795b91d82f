/**
 * Adversarial inputs and the functions over user text they are fed to: shared by the linear-time
 * property test (test/unit/linear-time.property.test.ts) and the `linear-text` benchmark
 * (bench/linear-text.ts), so both cover the same functions with the same inputs
 * (docs/reliability.md, "Linear time on any input").
 */
import fc from "fast-check";
import { extractiveSummary } from "../../core/adapters/llm/offline-summarizer.js";
import { parsePrior } from "../../core/adapters/llm/offline/format.js";
import { termsOf } from "../../core/adapters/llm/offline/lexicon.js";
import { clipSentence, splitSentences } from "../../core/adapters/llm/offline/units.js";
import { AppendMessageBody } from "../../core/adapters/http/schemas.js";
import { truncateToTokenBudget } from "../../core/domain/budget.js";
import { buildSections, neutraliseHeadings, parseBlock, renderBlock } from "../../core/domain/context-block.js";
import type { Message } from "../../core/domain/model.js";
import { checkSummary } from "../../core/domain/quality-gate.js";
import { excerptAround, queryTerms, selectRecall } from "../../core/domain/recall.js";
import { neutraliseReservedTags } from "../../core/domain/reserved-tags.js";
import {
  buildVocab,
  carrierText,
  carries,
  cleanWord,
  importantUnits,
  lossReport,
  nameRuns,
  norm,
  salientUnits,
  unitKey,
} from "../../core/domain/salient-units.js";
import { createHistoryIndex } from "../../core/domain/search-index.js";
import { buildStrengthPrompt, parseStrengthAnswer } from "../../core/domain/strength-analyzer-prompt.js";
import { offlineStrength } from "../../core/domain/strength-analyzer.js";
import { isAck, isSelfNarration } from "../../core/domain/strength.js";
import { extractCitations, parseSummaryAnswer } from "../../core/domain/summary-answer.js";
import { buildSummaryPrompt } from "../../core/domain/summary-prompt.js";
import { extendLedger } from "../../core/domain/ledger/build.js";
import { renderLedger } from "../../core/domain/ledger/render.js";
import { errorLines, exitStatus, ruleSentences } from "../../core/domain/ledger/scan.js";
import { classifyCall } from "../../core/domain/ledger/tools.js";

export const KIB = 1024;

// ---- adversarial inputs -------------------------------------------------------------------------

export type Gen = (n: number) => string;

/** `unit` repeated to n characters. */
export const repeated = (unit: string): Gen => (n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
/** A long run of one character (or short string) between a head and a tail that defeat a match. */
const run = (head: string, body: string, tail: string): Gen => (n) =>
  head + body.repeat(Math.max(0, Math.ceil((n - head.length - tail.length) / body.length))) + tail;

/**
 * Each pattern's worst case, and the runs and separators every scanner over text meets: named
 * inputs whose growth each function must keep linear.
 */
export const FAMILIES: Record<string, Gen> = {
  // Tool output: long hyphenated, dotted and slashed identifiers, and "<" before a blank run.
  "a- repeated": repeated("a-"),
  "a. repeated": run("", "a.", "x"),
  "a/ repeated": repeated("a/"),
  "a_ repeated": run("", "a_", "!"),
  "a-b. repeated": repeated("a-b."),
  "aB repeated (camelCase)": repeated("aB"),
  "< then blanks": run("<", " ", ""),
  "< / then blanks": run("< /", " ", "x"),
  "<summary then text, no >": run("<summary ", "a", ""),
  // Runs of one character with no match at their end.
  "letters": repeated("a"),
  "capitals": repeated("A"),
  "digits then a letter": run("", "1", "a"),
  "blanks then x": run("", " ", "x"),
  "blanks and tabs then x": run("", " \t", "x"),
  "newlines then x": run("", "\n", "x"),
  "CR then x": run("", "\r", "x"),
  "dots then x": run("", ".", "x"),
  "commas then x": run("", ",", "x"),
  "quotes then x": run("", '"', "x"),
  "backticks then x": run("", "`", "x"),
  "hyphens inside a word": run("a", "-", "b"),
  "apostrophes inside a word": run("a", "'", "b"),
  "stars then x": run("", "*", "x"),
  "hashes then x": run("", "#", "x"),
  // Repeated separators and half-matches.
  "1. repeated": run("", "1.", "a"),
  "1, repeated": run("", "1,", "a"),
  "$1 repeated": repeated("$1 "),
  "years": repeated("2023 x "),
  "dates": repeated("3 May 2024, "),
  "scheme without ://": run("", "a.", "://"),
  "URLs": repeated("http://a "),
  "URL with trailing dots": run("see http://a", ".", "b"),
  "unclosed <think>": repeated("<think>"),
  "unclosed <summary>": repeated("<summary>"),
  "<think without >": repeated("<think "),
  "unclosed citations": repeated("[#1 "),
  "citation lists": run("[#1", ",2", " x"),
  "heading then blanks and CR": run("# ", " ", "\r\r"),
  "rating then blanks": run("#1", " ", "x"),
  "dash then blanks": run("-", " ", "x"),
  "bullet, blanks, then a CR inside": run("- ", " ", "a\rb"),
  "speaker, blanks, then a CR inside": run("- User: ", " ", "a\rb"),
  "code fences": repeated("```a"),
  "sentences": repeated("Bob 1. "),
  "capitalised words": repeated("Ab "),
  "quoted phrases": repeated('"a b c" '),
  // What tools return: minified code, JSON, paths, base64.
  "minified code": repeated("function(a,b){return a.b.c-d/e[f]||g_h}"),
  "JSON": repeated('{"a-b":"c.d/e","n":1.5,"u":"http://x.io/a-b"},'),
  "paths": repeated("src/app/main-module.test.ts "),
  "base64": repeated("QUJDRGVmZ2gxMjM0NTY3OA+/="),
  "chat": repeated("Use src/app-main.ts and http://x.io/a-b on 3 May 2024; Priya paid $4,200. "),
};

/** Characters that matter to some pattern, for random repetitions (fast-check). */
export const SIGNIFICANT = [..." \t\n\r.,;:!?-_/'’\"“”`<>#*[]()$1aAzQ=+@&"];
export const unitArb = fc.array(fc.constantFrom(...SIGNIFICANT), { minLength: 1, maxLength: 6 }).map((cs) => cs.join(""));

// ---- the functions over user text --------------------------------------------------------------

const at = "2024-05-01T10:00:00.000Z";
const source = (content: string) => ({ id: "m1", role: "USER" as const, content, createdAt: at });
const message = (content: string): Message => ({
  id: "m1",
  processId: "p1",
  role: "TOOL",
  content,
  tags: [],
  createdAt: at,
  archivedInMemoryId: "mem1",
  tokens: 1,
});
const summaryOf = (text: string) => `<analysis>a</analysis><summary>${text}</summary>`;
const FIXED_SUMMARY = "- User: Priya paid $4,200 for src/app-main.ts on 3 May 2024.";

/**
 * What runs on user-supplied text, by module. `max` caps the larger size where the text cannot
 * grow past it in the service (a model answer is bounded by its output tokens).
 */
export interface TextFunction {
  name: string;
  f: (text: string) => unknown;
  /** Largest input the service can hand it, when smaller than a message's content. */
  max?: number;
}

export const FUNCTIONS: TextFunction[] = [
  { name: "salientUnits", f: (t) => salientUnits(t, buildVocab([t])) },
  { name: "buildVocab", f: (t) => buildVocab([t]) },
  { name: "nameRuns", f: (t) => nameRuns(t, { capitalisedMidSentence: new Set(), lowerCase: new Set() }, true) },
  { name: "unitKey", f: (t) => unitKey(t) },
  { name: "carrierText + carries", f: (t) => carries(carrierText(t), { key: "4200" }) },
  { name: "cleanWord", f: (t) => cleanWord(t) },
  { name: "norm", f: (t) => norm(t) },
  { name: "lossReport (sources)", f: (t) => lossReport([{ id: "m1", content: t, important: true }, { id: "m2", content: t }], FIXED_SUMMARY) },
  { name: "lossReport (summary)", f: (t) => lossReport([{ id: "m1", content: FIXED_SUMMARY }], t) },
  { name: "importantUnits", f: (t) => importantUnits([{ id: "m1", content: t, important: true }], 25) },
  { name: "neutraliseReservedTags", f: (t) => neutraliseReservedTags(t) },
  {
    name: "buildSummaryPrompt",
    f: (t) =>
      buildSummaryPrompt(
        { priorSummary: t, messages: [{ ...source(t), toolCallId: "call_1" }], instructions: t, topicLabel: t.slice(0, 200), mustKeep: [t.slice(0, 200)] },
        { maxSummaryTokens: 400, maxInputTokens: 50_000, citations: true },
      ),
  },
  { name: "parseSummaryAnswer (whole answer)", f: (t) => parseSummaryAnswer(t, 4000, 5) },
  { name: "parseSummaryAnswer (inside <summary>)", f: (t) => parseSummaryAnswer(summaryOf(t), 4000, 5) },
  { name: "extractCitations", f: (t) => extractCitations(t, 5) },
  { name: "neutraliseHeadings", f: (t) => neutraliseHeadings(t) },
  { name: "context block", f: (t) => parseBlock(renderBlock(buildSections({ summary: t, parent: { parent: { name: t, recipe: "r", engine: "e", title: "t" }, summary: t } })).block) },
  { name: "queryTerms", f: (t) => queryTerms(t) },
  { name: "excerptAround", f: (t) => excerptAround(t, ["a", "x", "priya"], 800) },
  { name: "selectRecall", f: (t) => selectRecall([message(t)], { query: t.slice(0, 500), budgetTokens: 2000, summary: t }) },
  { name: "truncateToTokenBudget", f: (t) => truncateToTokenBudget(t, Math.floor(t.length / 8)) },
  { name: "checkSummary", f: (t) => checkSummary(t, { maxTokens: t.length, required: ["$4,200", "src/app-main.ts"] }) },
  { name: "isAck / isSelfNarration", f: (t) => isAck(t) || isSelfNarration(t) },
  { name: "offlineStrength", f: (t) => offlineStrength({ role: "USER", content: t }) },
  { name: "offlineStrength (rated length)", f: (t) => offlineStrength({ role: "USER", content: t.slice(0, 1500) }), max: 1500 },
  { name: "buildStrengthPrompt", f: (t) => buildStrengthPrompt([{ role: "USER", content: t }], 100_000) },
  // A model answer holds about 8 tokens per rated message: a few kilobytes.
  { name: "parseStrengthAnswer", f: (t) => parseStrengthAnswer(`#1 strong\n${t}`, 3), max: 32 * KIB },
  { name: "history search", f: (t) => createHistoryIndex([{ id: "m1", content: t, tags: [] }]).search({ q: t.slice(0, 200), limit: 5 }) },
  { name: "AppendMessageBody", f: (t) => AppendMessageBody.safeParse({ role: "TOOL", content: t, toolCallId: "call_1" }) },
  { name: "splitSentences", f: (t) => splitSentences(t) },
  { name: "clipSentence", f: (t) => clipSentence(t) },
  { name: "termsOf", f: (t) => termsOf(t) },
  { name: "parsePrior", f: (t) => parsePrior(t, { focus: new Set(), vocab: buildVocab([t]), mustKeep: ["4200"] }) },
  { name: "offline summary", f: (t) => extractiveSummary({ priorSummary: t, messages: [source(t)], mustKeep: ["$4,200"] }, 400) },
  // The evidence ledger: a USER message's rules, a call's arguments, its result's error lines, the section.
  { name: "ruleSentences", f: (t) => ruleSentences(t) },
  { name: "errorLines + exitStatus", f: (t) => [errorLines(t), exitStatus(t)] },
  { name: "classifyCall", f: (t) => classifyCall({ name: "mcp__x__tool", arguments: JSON.stringify({ path: t.slice(0, 2000), command: t, input: `*** Begin Patch\n*** Update File: ${t}` }) }) },
  {
    name: "extendLedger + renderLedger",
    f: (t) =>
      renderLedger(
        extendLedger(null, [
          { id: "u1", role: "USER", content: t, tags: [] },
          { id: "a1", role: "ASSISTANT", content: "", tags: [], toolCalls: [{ id: "c1", name: "Bash", arguments: JSON.stringify({ command: t }) }] },
          { id: "t1", role: "TOOL", content: t, tags: [], toolCallId: "c1" },
        ]),
        3200,
      ),
  },
];

/** CPU milliseconds one call of `f` on `text` takes, averaged over calls filling at least 2 ms (CPU time, so a loaded machine does not count). */
export function cpuMsPerCall(f: (text: string) => unknown, text: string): number {
  let calls = 0;
  let elapsed = 0;
  const start = process.cpuUsage();
  do {
    f(text);
    calls++;
    const used = process.cpuUsage(start);
    elapsed = (used.user + used.system) / 1000;
  } while (elapsed < 2);
  return elapsed / calls;
}
