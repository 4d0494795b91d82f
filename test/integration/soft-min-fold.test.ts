/**
 * In background mode a SOFT fold is queued only once it would fold `softMinFoldTokens`, like an
 * inline SOFT fold (docs/configuration.md, "Tunables"): the setting means the same on both paths.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../core/ports/store.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

let store: Store;
beforeAll(async () => void ({ store } = await freshTable("soft-min-fold")));

describe("a background SOFT fold", () => {
  it.each([
    // A few weak tokens: queued once the setting asks for no minimum.
    { min: "0", weakText: "Thinking aloud. ", expected: "compaction_queued" },
    // About 1,800 weak tokens: not enough for a minimum of 100,000, so SOFT waits.
    { min: "100000", weakText: "Thinking aloud about module names here. ".repeat(45), expected: "below_min_saving" },
  ])("with softMinFoldTokens $min: $expected", async ({ min, weakText, expected }) => {
    // A minute between writes: a process this slow gets its HARD fold queued at prepareThreshold.
    let now = Date.parse("2026-12-01T10:00:00.000Z");
    const { deps } = testContainer({ store, env: { COMPACTION_SOFT_MIN_FOLD_TOKENS: min }, clock: { now: () => new Date((now += 60_000)) } });
    const key = { tenantId: "soft-min", processId: `soft-min-${min}` };
    await upsertProcess(deps, key.tenantId, key.processId, { projectId: "p" });
    for (let i = 0; i < 4; i++) await appendMessage(deps, key, { role: "ASSISTANT", content: weakText, tags: ["STRENGTH:weak"] });
    for (let i = 0; i < 12; i++) await appendMessage(deps, key, { role: i % 2 ? "ASSISTANT" : "USER", content: `step ${i}` });
    // Half the window: SOFT, below the ratio at which a HARD fold is queued.
    const out = await runTurn(deps, key, { model: { contextWindow: 10_000 }, prompt: { tokens: 5_000 } });
    expect(out.compaction).toMatchObject({ mode: "SOFT", reason: expected });
  });
});
