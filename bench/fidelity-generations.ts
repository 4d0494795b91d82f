/**
 * Fidelity across recompaction generations (docs/benchmarks.md, "Fidelity"): the units of strong
 * messages still carried by the summary after each of five folds.
 */
import { importantUnits, carrierText, carries, unitKey } from "../core/domain/salient-units.js";
import type { Message } from "../core/domain/model.js";
import { compactIfNeeded } from "../core/services/compaction/compaction.js";
import { appendMessage } from "../core/services/messages.js";
import { freshTable } from "./support/dynamo.js";
import { depsFor } from "./support/fidelity-deps.js";
import type { LocomoConversation } from "./support/locomo.js";
import { observedStore } from "./support/service.js";

export interface GenerationResult {
  conversation: string;
  /** Per generation 1..5: share of the strong messages' units (all, and the required ones) carried. */
  all: number[];
  required: number[];
  units: number;
  requiredUnits: number;
}

/** Turns per generation: the first is folded with its QA evidence turns tagged strong. */
export const GENERATION_TURNS = 40;

export async function measureGenerations(endpoint: string, conv: LocomoConversation): Promise<GenerationResult> {
  const t = await freshTable(endpoint, "fid-gen");
  const { store } = observedStore(t);
  let now = conv.turns[0]!.at;
  const deps = depsFor(store, { now: () => new Date(now.getTime()) });
  const key = { tenantId: "bench", processId: `${conv.id}-gen` };
  await store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "locomo" }, now.toISOString());
  const evidence = new Set(conv.qa.flatMap((q) => q.evidence));
  const strong: Message[] = [];
  const result: GenerationResult = { conversation: conv.id, all: [], required: [], units: 0, requiredUnits: 0 };
  let all: string[] = [];
  let required: string[] = [];
  for (let g = 0; g < 5; g++) {
    for (const turn of conv.turns.slice(g * GENERATION_TURNS, (g + 1) * GENERATION_TURNS)) {
      now = turn.at;
      const tags = g === 0 && evidence.has(turn.diaId) ? ["STRENGTH:strong"] : [];
      const { message } = await appendMessage(deps, key, { role: turn.speaker === conv.speakerA ? "USER" : "ASSISTANT", content: turn.text, tags });
      if (tags.length) strong.push(message);
    }
    const folded = await compactIfNeeded(deps, key, { model: { contextWindow: 100_000 }, force: "EMERGENCY" });
    if (!folded.compacted) throw new Error(`generation ${g + 1} of ${conv.id} did not fold: ${folded.reason}`);
    if (g === 0) {
      const refs = new Set((await store.getMemory(key, folded.memoryId!))!.sourceRefs);
      const sources = strong.filter((m) => refs.has(m.id)).map((m) => ({ id: m.id, content: m.content, important: true }));
      all = importantUnits(sources, Number.MAX_SAFE_INTEGER);
      required = importantUnits(sources, 25);
      result.units = all.length;
      result.requiredUnits = required.length;
    }
    const summary = carrierText((await store.getMemory(key, folded.memoryId!))!.content);
    const share = (units: string[]) => (units.length === 0 ? 1 : units.filter((u) => carries(summary, { key: unitKey(u) })).length / units.length);
    result.all.push(share(all));
    result.required.push(share(required));
  }
  return result;
}
