/**
 * What a 400-token offline summary keeps of the turns it folds, against the first N characters of
 * the same turns (same length each side): names and numbers, dates, and the word-for-word answers
 * to the data set's questions, over chunks of 60 and 120 turns from turns 0, 100, 200 and 300 of
 * each conversation, both sides rendered the same way (bench/support/summary-retention.ts). On
 * LoCoMo when it is there, else on the built-in conversations (test/unit/offline-summarizer.test.ts
 * asserts the same bars on those).
 */
import type { BenchContext } from "./support/context.js";
import { conversationsOrBuiltIn } from "./support/generated-conversation.js";
import type { SectionResult } from "./support/report.js";
import { chunksOf, measureRetention } from "./support/summary-retention.js";

const BUDGET = 400;
/** The margin by which the summary must beat the prefix on mean entity and date retention. */
const MARGIN = 0.15;

export async function runOfflineSummary(ctx: BenchContext): Promise<SectionResult> {
  const { conversations, locomo, source } = conversationsOrBuiltIn();
  if (!locomo) ctx.log(`offline-summary: ${source}`);
  const r = measureRetention(chunksOf(conversations), BUDGET);
  const f = (n: number) => n.toFixed(2);
  return {
    id: "offline-summary",
    title: `Offline summary vs first N characters (${BUDGET}-token budget, ${locomo ? "LoCoMo" : "built-in conversations"})`,
    command: "npm run bench -- --only offline-summary",
    tables: [
      {
        title: `${r.rows.length} chunks of 60 and 120 turns; share kept by the summary / by the prefix`,
        columns: ["chunk", "turns", "entities", "offline", "prefix", "dates", "offline", "prefix", "answers", "offline", "prefix"],
        rows: r.rows.map((row) => [
          row.label,
          String(row.turns),
          String(row.entities),
          f(row.entityShare[0]),
          f(row.entityShare[1]),
          String(row.dates),
          f(row.dateShare[0]),
          f(row.dateShare[1]),
          String(row.answers),
          String(row.answersKept[0]),
          String(row.answersKept[1]),
        ]),
      },
    ],
    targets: [
      {
        name: "mean entity retention, offline vs prefix",
        target: `> prefix + ${MARGIN}`,
        measured: `${r.meanEntity[0].toFixed(3)} vs ${r.meanEntity[1].toFixed(3)}`,
        met: r.meanEntity[0] > r.meanEntity[1] + MARGIN,
      },
      {
        name: "mean date retention, offline vs prefix",
        target: `> prefix + ${MARGIN}`,
        measured: `${r.meanDate[0].toFixed(3)} vs ${r.meanDate[1].toFixed(3)}`,
        met: r.meanDate[0] > r.meanDate[1] + MARGIN,
      },
      {
        name: "verbatim QA answers kept, offline vs prefix",
        target: "> prefix",
        measured: `${r.answersKept[0]} vs ${r.answersKept[1]} of ${r.answers}`,
        met: r.answersKept[0] > r.answersKept[1],
      },
    ],
    notes: [
      `Conversations: ${source}.`,
      "Entities: capitalised words not opening a sentence, and numbers of two digits or more. Dates: the days the turns happened on and the date words in them. Answers: the questions whose evidence turns all lie in the chunk and whose answer appears word for word in it.",
    ],
    data: r,
  };
}
