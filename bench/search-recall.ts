/**
 * Search recall on LoCoMo (docs/benchmarks.md, "Search recall (LoCoMo)"): each turn of a
 * conversation is one message (its text, no speaker name), each question with evidence is a query
 * through the history search endpoint's own ranking code (core/domain/search-index.ts: MiniSearch
 * BM25+, Porter stemming, stop words, prefix matching on the last word, fuzzy matching on words of
 * 5+ letters), and a question counts as a hit at k when any evidence turn is in the top k.
 * Category 5 (adversarial questions, which still list evidence turns) counts in the headline row
 * and is left out of the next; the last row writes `Speaker: ` before each turn, to show how much
 * the names in the questions lean on it. The reference row is published plain BM25 on all ten
 * conversations; ours run on three, so the plain BM25 row on those three is the fair baseline.
 *
 *   npx tsx bench/search-recall.ts [--write]     (--write updates docs/benchmarks.md)
 *
 * The conversations come from bench/support/locomo.ts: LoCoMo from data/locomo/ (`npm run
 * data:locomo`) or LOCOMO_DIR; without it, the built-in generated conversations, said so on stderr
 * (and --write refuses: the section's figures are LoCoMo's).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import MiniSearch from "minisearch";
import { createHistoryIndex, type IndexableMessage } from "../core/domain/search-index.js";
import { conversationsOrBuiltIn } from "./support/generated-conversation.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const KS = [1, 5, 10] as const;
/** Plain BM25 over single turns on all ten conversations of locomo10.json (a reference measured once, same rules). */
const REFERENCE = { 1: 0.319, 5: 0.551, 10: 0.625 } as const;

interface Tally {
  questions: number;
  hits: Record<(typeof KS)[number], number>;
}
const emptyTally = (): Tally => ({ questions: 0, hits: { 1: 0, 5: 0, 10: 0 } });

/** Builds a ranking over one conversation's turns and answers "top 10 ids for this question". */
type Ranker = (messages: IndexableMessage[]) => (question: string) => string[];

/** The endpoint's ranking code. */
const historySearch: Ranker = (messages) => {
  const index = createHistoryIndex(messages);
  return (q) => index.search({ q, limit: 10 }).map((h) => h.id);
};

/** Plain BM25 for comparison on the same data: MiniSearch's defaults (lower-case, no stemming, no stop words). */
const plainBm25: Ranker = (messages) => {
  const mini = new MiniSearch<{ id: string; content: string }>({ fields: ["content"] });
  mini.addAll(messages.map((m) => ({ id: m.id, content: m.content })));
  return (q) => mini.search(q).slice(0, 10).map((r) => r.id as string);
};

const data = conversationsOrBuiltIn();
if (!data.locomo) console.error(`search-recall: ${data.source}`);

function run(options: { withAdversarial: boolean; ranker?: Ranker; withSpeaker?: boolean }) {
  const ranker = options.ranker ?? historySearch;
  const files = data.conversations.map((c) => c.id);
  const total = emptyTally();
  const perCategory = new Map<number, Tally>();
  let turns = 0;
  let skippedNoEvidence = 0;
  let skippedAdversarial = 0;
  const started = performance.now();
  for (const conversation of data.conversations) {
    const messages: IndexableMessage[] = conversation.turns.map((t) => ({
      id: t.diaId,
      content: options.withSpeaker ? `${t.speaker}: ${t.text}` : t.text,
      tags: [],
    }));
    turns += messages.length;
    const search = ranker(messages);
    for (const qa of conversation.qa) {
      const evidence = new Set(qa.evidence);
      if (evidence.size === 0) {
        skippedNoEvidence++;
        continue;
      }
      if (qa.category === 5 && !options.withAdversarial) {
        skippedAdversarial++;
        continue;
      }
      const top = search(qa.question);
      const tally = perCategory.get(qa.category) ?? emptyTally();
      perCategory.set(qa.category, tally);
      for (const t of [total, tally]) {
        t.questions++;
        for (const k of KS) if (top.slice(0, k).some((id) => evidence.has(id))) t.hits[k]++;
      }
    }
  }
  return { files, turns, total, perCategory, skippedNoEvidence, skippedAdversarial, ms: performance.now() - started };
}

const fmt = (n: number) => n.toFixed(3);
const recall = (t: Tally, k: (typeof KS)[number]) => (t.questions ? t.hits[k] / t.questions : 0);

const all = run({ withAdversarial: true });
const noAdv = run({ withAdversarial: false });
const plain = run({ withAdversarial: true, ranker: plainBm25 });
const speaker = run({ withAdversarial: true, withSpeaker: true });
const row = (label: string, data: string, r: ReturnType<typeof run>) =>
  `| ${label} | ${data} | ${r.total.questions} | ${KS.map((k) => fmt(recall(r.total, k))).join(" | ")} |`;
const ours = `${all.files.length} conversations (${all.files.join(", ")})`;

const rows = [
  `| plain BM25 (reference, all ten conversations) | all 10 conversations | 1,538 | ${fmt(REFERENCE[1])} | ${fmt(REFERENCE[5])} | ${fmt(REFERENCE[10])} |`,
  row("plain BM25 (MiniSearch defaults: no stemming, no stop words)", ours, plain),
  row("**history search**, all categories", "same", all),
  row("history search, without category 5 (adversarial)", "same", noAdv),
  row("history search, speaker name prefixed to each turn", "same", speaker),
];
/** LoCoMo's question categories, by number. */
const CATEGORY_NAMES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial" };
const perCategory = [...all.perCategory.entries()]
  .sort(([a], [b]) => a - b)
  .map(([cat, t]) => `${cat} ${CATEGORY_NAMES[cat] ?? "other"} ${KS.map((k) => fmt(recall(t, k))).join(" / ")} (${t.questions})`);

/** Prose wrapped at 100 characters, as the docs are. */
function wrapProse(text: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join("\n");
}

const section = `## Search recall (LoCoMo)

\`npx tsx bench/search-recall.ts\` (\`--write\` updates this section): how well
\`GET /v1/processes/{id}/history/search\` finds the turn that answers a LoCoMo question (a hit at k:
an evidence turn in the top k; ${all.skippedNoEvidence} questions without evidence skipped). The speaker-prefixed row is
for information only: real messages carry no speaker name.

| ranking | data | questions | recall@1 | recall@5 | recall@10 |
|---|---|---|---|---|---|
${rows.join("\n")}

${wrapProse(`Per LoCoMo category, recall@1 / @5 / @10 (questions): ${perCategory.join("; ")}. ${all.turns.toLocaleString("en-US")} turns indexed; indexing and ${all.total.questions} queries took ${Math.round(all.ms)} ms.`)}
`;

console.log(section);

if (process.argv.includes("--write") && !data.locomo) {
  console.error("search-recall: --write ignored: these figures are from the built-in conversations, not LoCoMo");
} else if (process.argv.includes("--write")) {
  const file = path.join(repoRoot, "docs/benchmarks.md");
  const heading = "## Search recall (LoCoMo)";
  if (!existsSync(file)) {
    writeFileSync(file, section);
  } else {
    const text = readFileSync(file, "utf8");
    const start = text.indexOf(heading);
    let next: string;
    if (start === -1) {
      next = `${text.trimEnd()}\n\n${section}`;
    } else {
      // Our section runs to the next level-2 heading (another engineer's) or the end of the file.
      const after = text.indexOf("\n## ", start + heading.length);
      next = text.slice(0, start) + section + (after === -1 ? "" : `\n${text.slice(after + 1)}`);
    }
    writeFileSync(file, next);
  }
  console.log(`updated ${path.relative(repoRoot, file)}`);
}
