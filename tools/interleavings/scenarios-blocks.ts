/**
 * A provider's block refused while its memory changes (docs/turns.md, "The provider's block"): the
 * turn that reports the refusal races an inline fold that supersedes the memory and an undo of it.
 * The refusal is noted whatever wins, the block stays stored for audit, and no turn's request leads
 * with it from the refusal on (tools/interleavings/README.md, "Scenarios").
 */
import { memorySk } from "../../core/adapters/dynamodb/keys.js";
import type { Memory } from "../../core/domain/model.js";
import type { NativeContent } from "../../core/domain/native/formats.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { runTurn, type TurnResult } from "../../core/services/turn.js";
import { reverter } from "./actors.js";
import { scenario, type Actor, type Scenario } from "./scenario.js";
import { failed } from "./scenarios-native.js";
import { addMessages, chat, createProcess, WINDOW, type Stage } from "./setup.js";

/** The model that wrote the block: a turn of its family in format `anthropic` replays it. */
const BLOCK_MODEL = "claude-fable-5-1";

/** The `compaction` block an Anthropic provider fold answers, for the summary `text`. */
const compactionBlock = (text: string): NativeContent => ({ format: "anthropic", content: [{ type: "compaction", content: text, signature: "sig-checker" }] });

/**
 * A provider fold in format `anthropic` that answers at once with its block; `chained` collects
 * the previous block each call was sent (none: undefined).
 */
const blockSummarizer = (chained: Array<NativeContent | undefined> = []): Summarizer => ({
  provider: "anthropic-compaction",
  foldFormat: "anthropic",
  model: BLOCK_MODEL,
  contextWindow: 200_000,
  maxOutputTokens: 400,
  async summarize(input) {
    chained.push(input.providerFold?.priorNative);
    const keep = input.mustKeep?.length ? ` keeps ${input.mustKeep.join("; ")}` : "";
    const summary = `Compacted ${input.messages.length} messages.${keep}`;
    return { ok: true, summary, native: compactionBlock(summary), usage: { inputTokens: 1, outputTokens: 1 } };
  },
});

/** Eight messages folded by the provider (memory `blockId`, its block kept), then six newer ones. */
async function blockFolded(stage: Stage): Promise<{ blockId: string; block: NativeContent }> {
  await createProcess(stage);
  await addMessages(stage, chat(8));
  const summarizer = blockSummarizer();
  const deps: ServiceDeps = { ...stage.deps(), summarizer: async () => summarizer };
  const out = await compactIfNeeded(deps, stage.key, { model: { contextWindow: WINDOW }, force: "HARD" });
  const memory = out.memoryId ? await deps.store.getMemory(stage.key, out.memoryId) : null;
  if (!memory?.native || !memory.metadata.providerFold?.block) throw new Error(`setup: no provider block was kept (${out.reason ?? JSON.stringify(memory?.metadata.providerFold)})`);
  await addMessages(stage, chat(6, "later"));
  return { blockId: memory.id, block: memory.native };
}

/**
 * `POST .../turns` in format `anthropic` by the block's model family, at `ratio` of the window;
 * `chained`: it folds with the provider (inline), collecting the previous blocks it sends.
 */
const blockTurn = (stage: Stage, o: { name: string; ratio: number; execution: "inline" | "background"; refused?: string; chained?: Array<NativeContent | undefined> }): Actor => ({
  name: o.name,
  execution: o.execution,
  run: (deps) =>
    runTurn(o.chained ? { ...deps, summarizer: async () => blockSummarizer(o.chained) } : deps, stage.key, {
      model: { name: BLOCK_MODEL, contextWindow: WINDOW },
      prompt: { tokens: o.ratio * WINDOW },
      format: "anthropic",
      ...(o.refused ? { blockRefused: { memoryId: o.refused, error: "compaction_signature_invalid" } } : {}),
    }),
});

/** A turn whose request leads with the refused block. */
const replays = (turn: TurnResult | undefined, blockId: string) => turn?.providerBlock?.memoryId === blockId && turn.providerBlock.sent;

export const blockScenarios: Scenario[] = [
  scenario({
    id: "S28",
    title: "a turn reports the provider refused a memory's block (blockRefused) while an inline turn folds past that memory and an undo of it runs",
    build: blockFolded,
    actors: (stage, { blockId, block }) => {
      const chained: Array<NativeContent | undefined> = [];
      return {
        actors: [
          blockTurn(stage, { name: "refuse", ratio: 0.3, execution: "background", refused: blockId }),
          blockTurn(stage, { name: "turn", ratio: 0.9, execution: "inline", chained }),
          reverter(stage, blockId),
        ],
        async check({ snapshot, run }) {
          const v: string[] = [];
          // A fold that started after the refusal was written chains the readable summary, not the block.
          const noted = run.steps.findIndex((s) => s.actor === "refuse" && s.call === "UpdateCommand" && !s.refused && (s.input as { Key?: { sk?: string } })?.Key?.sk === memorySk(blockId));
          const folding = run.steps.findIndex((s) => s.actor === "turn");
          if (noted >= 0 && noted < folding && chained.some((sent) => JSON.stringify(sent) === JSON.stringify(block))) {
            v.push(`the fold that started after the refusal (step ${noted}) sent the refused block of ${blockId}`);
          }
          const refuse = run.outcomes.get("refuse");
          v.push(...failed("refuse", refuse));
          // The refusing turn notes it before it reads the view: its own request already goes without the block.
          if (refuse?.ok && replays(refuse.value as TurnResult, blockId)) v.push(`the refusing turn's request leads with the block of ${blockId}`);
          const memory = snapshot.memories.find((m) => m.id === blockId);
          if (!memory) return [...v, `memory ${blockId} is gone`];
          // Noted once, on that memory alone, and the block kept as it was (an undone memory keeps it for audit).
          if (!memory.metadata.providerFold?.refused) v.push(`the refusal of ${blockId} was not recorded (${memory.status})`);
          const others = snapshot.memories.filter((m: Memory) => m.id !== blockId && m.metadata.providerFold?.refused);
          if (others.length > 0) v.push(`the refusal was recorded on ${others.map((m) => m.id).join(", ")} too`);
          if (JSON.stringify(memory.native) !== JSON.stringify(block)) v.push(`the block of ${blockId} changed: ${JSON.stringify(memory.native)}`);
          // Whatever is newest now, the next turn never leads with the refused block.
          const next = await runTurn(stage.deps("background"), stage.key, { model: { name: BLOCK_MODEL, contextWindow: WINDOW }, prompt: { tokens: 0.3 * WINDOW }, format: "anthropic" });
          if (replays(next, blockId)) v.push(`a turn after the refusal leads with the block of ${blockId}`);
          if (memory.status === "OK" && snapshot.state?.activeSummaryId === blockId && next.providerBlock?.reason !== "refused") {
            v.push(`${blockId} is the active summary and the next turn does not say its block was refused (${JSON.stringify(next.providerBlock)})`);
          }
          return v;
        },
      };
    },
  }),
];
