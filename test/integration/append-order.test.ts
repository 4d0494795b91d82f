/**
 * Message ids sort by creation time (core/adapters/ids.ts): the history is listed in id order,
 * and a range compaction selects by `createdAt` (docs/compaction.md, "Range jobs"), so the
 * two orders must agree even when appends of one container overlap, against the real DynamoDB
 * Local engine.
 */
import { describe, expect, it } from "vitest";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { readAllMessages } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";
import { holdFirst } from "../support/held-store.js";

describe("overlapping appends of one container", () => {
  it("list in createdAt order, so a range from an earlier message to a later one is valid", async () => {
    const { store } = await freshTable("order");
    const key = { tenantId: "order", processId: "p1" };
    const hold = holdFirst(store, "getProcess");
    let now = Date.parse("2026-03-01T10:00:00.000Z");
    const { deps } = testContainer({ store: hold.store, env: { COMPACTION_EXECUTION: "inline" }, clock: { now: () => new Date(now) } });
    await upsertProcess({ ...deps, store }, key.tenantId, key.processId, { projectId: "proj" });

    // The first append reads META (whether the strength analyzer rates it) and waits there; a
    // second append of the same container, 5 ms later, is stored first.
    const first = appendMessage(deps, key, { role: "ASSISTANT", content: "The first answer." });
    await hold.reached;
    now += 5;
    await appendMessage(deps, key, { role: "ASSISTANT", content: "The second answer." });
    hold.release();
    await first;

    const history = await readAllMessages(store, key);
    expect(history).toHaveLength(2);
    const times = history.map((m) => Date.parse(m.createdAt));
    expect(times[0]!, JSON.stringify(history.map((m) => [m.id, m.createdAt]))).toBeLessThanOrEqual(times[1]!);
    // What a caller picking "from the first listed message to the last" sends is a valid range
    // that holds both.
    const range = { from: history[0]!.createdAt, to: history[1]!.createdAt, topicLabel: "answers" };
    await expect(compactRange({ ...deps, store }, key, range)).resolves.toMatchObject({ compactedMessages: 2 });
  });
});
