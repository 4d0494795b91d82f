/**
 * The evidence ledger through folds, a revert and an export/import (docs/compaction.md, "The
 * evidence ledger"), against DynamoDB Local: each fold carries the prior summary's ledger forward,
 * the memory block replays its section unchanged between folds, a revert brings back the prior
 * summary's ledger, and an import keeps it with its message ids moved; the invariants hold after each.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createLocalBus } from "../../core/adapters/events/local-bus.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { LEDGER_HEADING } from "../../core/domain/ledger/render.js";
import type { MessageInput } from "../../core/domain/fields.js";
import type { ImportingStore, ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { getContext } from "../../core/services/context.js";
import { listMemories, memoryDetail } from "../../core/services/memories.js";
import { appendMessage } from "../../core/services/messages.js";
import { exportPage } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { checkInvariants } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { createMemoryLog } from "../support/memory-log.js";

const TENANT = "ledger";
const WINDOW = 10_000;
let store: ImportingStore;
let deps: ServiceDeps;
const key: ProcessKey = { tenantId: TENANT, processId: "agent-1" };
let calls = 0;
let fake: ReturnType<typeof createFakeSummarizer>;

/** One tool call and its result, as an agent loop appends them. */
async function tool(name: string, args: Record<string, unknown>, output: string) {
  const id = `call_${++calls}`;
  await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id, name, arguments: JSON.stringify(args) }] } as MessageInput);
  await appendMessage(deps, key, { role: "TOOL", content: output, toolCallId: id } as MessageInput);
}

const say = (role: "USER" | "ASSISTANT", content: string) => appendMessage(deps, key, { role, content });
const fold = async () => (await compactManually(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" })).result;
const section = async () => (await getContext(deps, key)).sections.find((s) => s.name === LEDGER_HEADING)?.content ?? null;
const settledInvariants = (k: ProcessKey) => checkInvariants(store, k, { settled: true, noLease: true });

let firstId = "";
let secondId = "";

beforeAll(async () => {
  store = (await freshTable("ledger")).store;
  fake = createFakeSummarizer();
  deps = createDeps({ env: {}, store, events: createLocalBus(undefined, { retryDelaysMs: [] }), metrics: createRecordingMetrics(), log: createMemoryLog(), summarizerFactory: async () => fake });
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  await say("USER", "Fix the failing build.");
  await say("ASSISTANT", "On it.");
  await say("USER", "Thanks. Never push to main without asking me.");
  await tool("Read", { file_path: "src/build.ts" }, "export function build() {}");
  await tool("Bash", { command: "npm test" }, "FAIL src/build.test.ts\nTypeError: build is not a function\nExit code: 1");
  await tool("Edit", { file_path: "src/build.ts", old_string: "a", new_string: "b" }, "ok");
  for (let i = 0; i < 12; i++) await say(i % 2 ? "ASSISTANT" : "USER", `step ${i}: looking at the build output ${i}.`);
  const first = await fold();
  expect(first, JSON.stringify(first)).toMatchObject({ compacted: true });
  firstId = first.memoryId!;
}, 60_000);

describe("the evidence ledger", () => {
  it("is kept on the summary a fold commits and replayed as its own section, citing its messages", async () => {
    const text = await section();
    expect(text).toContain("Never push to main without asking me.");
    expect(text).toContain("TypeError: build is not a function");
    expect(text).toContain("edited src/build.ts");
    expect(text).toContain("`npm test` → exit 1");
    const detail = await memoryDetail(deps, key, firstId);
    expect(detail.ledger?.files.map((f) => `${f.op} ${f.path}`)).toEqual(["edited src/build.ts"]);
    const cited = detail.ledger!.constraints[0]!.messageId;
    expect(text).toContain(cited);
    expect((await store.getMessage(key, cited))?.content).toContain("Never push to main");
    expect(detail.memory.metadata.loss?.ledger).toMatchObject({ items: 5 });
    // The folded part's rule and its open errors were required of the summary, word for word.
    expect(fake.calls[0]!.mustKeep).toEqual(expect.arrayContaining(["Never push to main without asking me", "TypeError build is not a function"]));
    // Listed without the ledger itself (one request away), with its section's counts.
    const [listed] = await listMemories(deps, key, { kind: "ARCHIVED_CHAT", includeSuperseded: false, includeFailed: false });
    expect(listed!.ledger).toBeUndefined();
    expect(listed!.metadata.ledger).toMatchObject({ files: 1, commands: 1, openErrors: 2, constraints: 1 });
    expect(await settledInvariants(key)).toEqual([]);
  });

  it("stays byte-identical in the block between folds, and the next fold carries it forward and resolves what a clean run fixed", async () => {
    const a = await runTurn(deps, key, { model: { contextWindow: 200_000 }, message: { role: "USER", content: "Try again." } });
    const b = await runTurn(deps, key, { model: { contextWindow: 200_000 }, message: { role: "USER", content: "And once more." } });
    expect(b.compaction.compacted).toBe(false);
    expect(b.context.staticBlock).toBe(a.context.staticBlock);
    expect(a.context.staticBlock).toContain(`## ${LEDGER_HEADING}`);

    await tool("Bash", { command: "npm test" }, "all 12 tests passed\nExit code: 0");
    for (let i = 0; i < 12; i++) await say(i % 2 ? "ASSISTANT" : "USER", `more ${i}: the build is green ${i}.`);
    const second = await fold();
    expect(second.compacted).toBe(true);
    secondId = second.memoryId!;
    const detail = await memoryDetail(deps, key, secondId);
    expect(detail.ledger?.constraints.map((c) => c.text)).toEqual(["Never push to main without asking me."]);
    expect(detail.ledger?.commands).toEqual([expect.objectContaining({ command: "npm test", outcome: "exit 0", runs: 2 })]);
    expect(detail.ledger?.errors.every((e) => e.resolvedBy !== undefined)).toBe(true);
    const text = await section();
    expect(text).toContain("Resolved errors:");
    expect(text).not.toContain("Open errors:");
    expect(await settledInvariants(key)).toEqual([]);
  });

  it("comes back as it was with the prior summary when the newest fold is reverted", async () => {
    await revertMemory(deps, key, secondId);
    const text = await section();
    expect(text).toContain("Open errors:");
    expect(text).toContain("`npm test` → exit 1");
    expect(await settledInvariants(key)).toEqual([]);
  });

  it("requires the folded part's rules and open errors of its summary: one that drops them is retried with them named", async () => {
    const k: ProcessKey = { tenantId: TENANT, processId: "agent-gate" };
    await upsertProcess(deps, TENANT, k.processId, { projectId: "proj" });
    await appendMessage(deps, k, { role: "USER", content: "Clean up the config parser." }); // the task: the anchor, never folded
    await appendMessage(deps, k, { role: "USER", content: "Always run the linter before a commit." });
    const id = `call_${++calls}`;
    await appendMessage(deps, k, { role: "ASSISTANT", content: "", toolCalls: [{ id, name: "Bash", arguments: JSON.stringify({ command: "npm run lint" }) }] } as MessageInput);
    await appendMessage(deps, k, { role: "TOOL", content: "src/a.ts:3 error Unexpected any in parseConfig\nExit code: 1", toolCallId: id } as MessageInput);
    for (let i = 0; i < 12; i++) await appendMessage(deps, k, { role: i % 2 ? "ASSISTANT" : "USER", content: `note ${i} on the lint run ${i}.` });
    const from = fake.calls.length;
    fake.script.push({ ok: true, summary: "You looked at the lint output.", usage: { inputTokens: 10, outputTokens: 5 } });
    const result = (await compactManually(deps, k, { model: { contextWindow: WINDOW }, force: "HARD" })).result;
    expect(result.compacted).toBe(true);
    const [first, retry] = fake.calls.slice(from);
    const required = ["Always run the linter before a commit", "src/a.ts:3 error Unexpected any in parseConfig"];
    expect(first!.mustKeep).toEqual(expect.arrayContaining(required));
    expect(retry?.mustKeep).toEqual(expect.arrayContaining(required));
    const detail = await memoryDetail(deps, k, result.memoryId!);
    for (const unit of required) expect(detail.memory.content).toContain(unit);
    // Required of this summary only: the ledger carries them on, later summaries need not.
    expect((await store.getMemory(k, result.memoryId!))?.keepUnits ?? []).not.toContain(required[0]);
    for (let i = 0; i < 12; i++) await appendMessage(deps, k, { role: i % 2 ? "ASSISTANT" : "USER", content: `later ${i}: the parser is clean ${i}.` });
    const next = fake.calls.length;
    expect((await compactManually(deps, k, { model: { contextWindow: WINDOW }, force: "HARD" })).result.compacted).toBe(true);
    expect(fake.calls.slice(next).flatMap((c) => c.mustKeep ?? [])).not.toContain(required[0]);
    expect((await getContext(deps, k)).sections.find((s) => s.name === LEDGER_HEADING)?.content).toContain("Always run the linter before a commit.");
    expect(await settledInvariants(k)).toEqual([]);
  });

  it("survives an export and an import into a new id, its message ids moved with the messages", async () => {
    let textOut = "";
    let cursor;
    do {
      const page = await exportPage(deps, key, cursor);
      textOut += page.text;
      cursor = page.next;
    } while (cursor);
    const copy: ProcessKey = { tenantId: TENANT, processId: "agent-copy" };
    const imported = await importProcess(deps, copy, textOut, { remapIds: true });
    const [head] = await listMemories(deps, copy, { kind: "ARCHIVED_CHAT", includeSuperseded: false, includeFailed: false });
    const detail = await memoryDetail(deps, copy, head!.id);
    const original = await memoryDetail(deps, key, firstId);
    expect(detail.ledger?.constraints[0]?.text).toBe(original.ledger?.constraints[0]?.text);
    expect(detail.ledger?.constraints[0]?.messageId).not.toBe(original.ledger?.constraints[0]?.messageId);
    expect((await store.getMessage(copy, detail.ledger!.constraints[0]!.messageId))?.content).toContain("Never push to main");
    expect(head!.tokens).toBe(original.memory.tokens);
    expect(imported).toBeTruthy();
    expect(await settledInvariants(copy)).toEqual([]);
  });
});
