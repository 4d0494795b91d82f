/**
 * A range job names no model, so it keeps to the fold rules of the model the process's last turn
 * named (docs/turns.md, "What a fold may keep"): for a Gemini model a range whose end cuts a turn
 * leaves that turn whole, against DynamoDB Local.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "../../core/domain/model.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

/** The task (pinned on a new process), then two turns of two tool steps each; the messages as stored. */
async function twoTurns(deps: ServiceDeps, key: ProcessKey): Promise<Message[]> {
  const out: Message[] = [];
  const add = async (m: Parameters<typeof appendMessage>[2]) => out.push((await appendMessage(deps, key, m)).message);
  await add({ role: "USER", content: "Keep every module building." });
  for (const t of [0, 1]) {
    await add({ role: "USER", content: `Turn ${t}: check the build of module ${t}.` });
    for (const s of [0, 1]) {
      await add({ role: "ASSISTANT", content: "", toolCalls: [{ id: `c${t}${s}`, name: "run", arguments: `{"step":${s}}` }] });
      await add({ role: "TOOL", content: `step ${s} of turn ${t}: the build of module ${t} passed.`, toolCallId: `c${t}${s}` });
    }
    await add({ role: "ASSISTANT", content: `Module ${t} builds.` });
  }
  return out;
}

describe("a range job's fold unit", { timeout: 120_000 }, () => {
  it.each([
    ["gemini-3-pro", 6],
    ["gpt-4o", 7],
  ])("after a turn on %s folds %i of the messages a window ending inside a turn holds", async (name, folded) => {
    const { store } = await freshTable("rng");
    const key = { tenantId: "rng", processId: `p-${name}` };
    const { deps } = testContainer({ store, env: { COMPACTION_EXECUTION: "inline" } });
    await upsertProcess(deps, key.tenantId, key.processId, { projectId: "proj" });
    const history = await twoTurns(deps, key);
    await runTurn(deps, key, { model: { name, contextWindow: 32_000 }, message: { role: "USER", content: "What is left to build?" } });
    // From the first turn to the second turn's first call, whose result lies outside the window.
    const out = await compactRange(deps, key, { from: history[1]!.createdAt, to: history[8]!.createdAt, topicLabel: "builds" });
    expect(out.compactedMessages).toBe(folded);
  });
});
