/**
 * The sliding-window compaction (docs/compaction.md) through the service against the real DynamoDB Local
 * engine: modes and the selector table, anchors, keepRecent, the triggering turn, tool groups, the
 * summary chain, failures, chunking, large folds, observability and tunables.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedImported } from "../support/seed.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createDynamoStore, TRANSACTION_LIMIT } from "../../core/adapters/dynamodb/store.js";
import { createOpenAISummarizer } from "../../core/adapters/llm/openai-summarizer.js";
import { AppError } from "../../core/domain/errors.js";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { sourceChars } from "../../core/domain/selector.js";
import { messageTokens } from "../../core/domain/tokens.js";
import { summarizerInputCap } from "../../core/domain/summarizer-fit.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { SummarizeInput } from "../../core/ports/summarizer.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import { replayTokens } from "../../core/domain/replay.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { composeContext } from "../../core/services/context.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer, type FakeSummarizer } from "../support/fake-summarizer.js";
import { checkInvariants, readAllMessages } from "../../tools/invariants.js";
import { chatCompletionBody, startLlmWireServer, type LlmWireServer } from "../../tools/llm-wire-server.js";
import { testContainer } from "../support/container.js";

const TENANT = "acme";
const WINDOW = 100_000;
let store: Store;
let client: DynamoDBDocumentClient;
let tableName: string;
let endpoint: string;
let seq = 0;

beforeAll(async () => {
  ({ store, client, tableName, endpoint } = await freshTable("cmp"));
});

const harness = (options: { env?: Record<string, string>; store?: Store; fake?: FakeSummarizer } = {}) =>
  testContainer({ ...options, store: options.store ?? store });

async function newProcess(deps: ServiceDeps, projectId = "proj"): Promise<ProcessKey> {
  const processId = `cmp-${++seq}`;
  await upsertProcess(deps, TENANT, processId, { projectId });
  return { tenantId: TENANT, processId };
}

interface Say {
  tags?: string[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

async function say(deps: ServiceDeps, key: ProcessKey, role: Role, content: string, extra: Say = {}): Promise<Message> {
  return (await appendMessage(deps, key, { role, content, ...extra })).message;
}

/** `n` messages of one strength, alternating ASSISTANT/USER and ending with USER. */
async function sayMany(deps: ServiceDeps, key: ProcessKey, n: number, tags: string[] = [], label = "step") {
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    const role: Role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    out.push(await say(deps, key, role, `${label} ${i}: the importer now validates column ${i} against the schema.`, { tags }));
  }
  return out;
}

const hard = (extra: Partial<CompactionRequest> = {}): CompactionRequest => ({
  model: { contextWindow: WINDOW },
  force: "HARD",
  ...extra,
});
const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);
const foldedIds = (fake: FakeSummarizer) => fake.calls.flatMap((c) => c.messages.map((m) => m.id));

async function activeIds(key: ProcessKey) {
  return ids((await store.activeView(key))!.messages);
}

describe("modes and the selector table", () => {
  /** docs/compaction.md "The selector table", row by row: strength -> [SOFT, HARD, EMERGENCY]. */
  const TABLE = {
    pinned: ["stay", "stay", "stay"],
    strong: ["stay", "stay", "compact"],
    normal: ["stay", "compact", "compact"],
    weak: ["compact", "compact", "compact"],
  } as const;
  const MODES = ["SOFT", "HARD", "EMERGENCY"] as const;

  /** One message per table cell, then 10 pinned messages so no anchor reaches the table rows. */
  async function seedTable(deps: ServiceDeps, key: ProcessKey) {
    const rows = {
      pinned: [
        await say(deps, key, "USER", "Build a CSV importer for the billing service."), // auto-pinned
        await say(deps, key, "ASSISTANT", "Policy: never drop a row silently.", { tags: ["STRENGTH:pinned"] }),
      ],
      strong: [await say(deps, key, "ASSISTANT", "Decision: amounts are stored as integer cents.", { tags: ["STRENGTH:strong"] })],
      normal: [
        await say(deps, key, "ASSISTANT", "The parser handles quoted fields and CRLF line endings.", { tags: ["STRENGTH:normal"] }),
        await say(deps, key, "USER", "Rows without an invoice id must be rejected with a reason."),
      ],
      weak: [
        // Long enough that SOFT's fold outweighs a summary (SOFT waits for a worthwhile fold).
        await say(deps, key, "ASSISTANT", "Thinking aloud about module names here. ".repeat(45), { tags: ["STRENGTH:weak"] }),
        await say(deps, key, "USER", "Ok, thanks!"),
        await say(deps, key, "ASSISTANT", "Let me check."),
      ],
    };
    const tail = await sayMany(deps, key, 10, ["STRENGTH:pinned"], "pinned tail");
    return { rows, tail };
  }

  it.each(MODES.map((mode, column) => ({ mode, column, tokens: { SOFT: 40_000, HARD: 85_000, EMERGENCY: 95_000 }[mode] })))(
    "$mode (prompt at $tokens of 100000 tokens) folds exactly the table's compact cells",
    async ({ mode, column, tokens }) => {
      const { deps, fake } = harness();
      const key = await newProcess(deps);
      const { rows, tail } = await seedTable(deps, key);
      const result = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens } });
      expect(result).toMatchObject({ mode, compacted: true });

      const history = new Map((await readAllMessages(store, key)).map((m) => [m.id, m]));
      for (const [strength, cells] of Object.entries(TABLE)) {
        for (const m of rows[strength as keyof typeof rows]) {
          const archived = history.get(m.id)!.archivedInMemoryId !== null;
          expect({ strength, content: m.content, archived }).toEqual({ strength, content: m.content, archived: cells[column] === "compact" });
        }
      }
      const expected = Object.entries(TABLE).flatMap(([s, cells]) => (cells[column] === "compact" ? ids(rows[s as keyof typeof rows]) : []));
      expect(foldedIds(fake).sort()).toEqual(expected.sort());
      expect(result.compactedMessages).toBe(expected.length);
      expect(await checkInvariants(store, key, { settled: true, noLease: true, mustStayActive: ids(tail) })).toEqual([]);
    },
  );

  it("below the soft threshold is NONE: no summarizer call, nothing written", async () => {
    const { deps, fake, metrics } = harness();
    const key = await newProcess(deps);
    await seedTable(deps, key);
    const before = await activeIds(key);
    const result = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 39_999 } });
    expect(result).toMatchObject({ mode: "NONE", compacted: false, compactedMessages: 0, tokensBefore: 39_999, tokensAfter: 39_999 });
    expect(fake.calls).toEqual([]);
    expect(metrics.runs).toEqual([]);
    expect(await store.listMemories(key)).toEqual([]);
    expect(await activeIds(key)).toEqual(before);
  });

  it("derives the ratio from prompt.chars and prompt.text at chars/4, and from its own estimate without a prompt", async () => {
    const { deps } = harness();
    const key = await newProcess(deps);
    await seedTable(deps, key);
    const view = (await store.activeView(key))!;
    const request = (prompt?: CompactionRequest["prompt"]) => ({ model: { contextWindow: WINDOW }, ...(prompt ? { prompt } : {}) });
    expect((await compactIfNeeded(deps, key, request({ chars: 159_996 }))).tokensBefore).toBe(39_999);
    expect((await compactIfNeeded(deps, key, request({ text: "x".repeat(1_000) }))).tokensBefore).toBe(250);
    const own = await compactIfNeeded(deps, key, request());
    expect(own).toMatchObject({ mode: "NONE", tokensBefore: replayTokens(view) });
    expect(own.tokensBefore).toBe(view.messages.reduce((n, m) => n + messageTokens(m), 0));
  });
});

describe("anchor, keepRecent and the triggering turn", () => {
  it.each([
    { mode: "SOFT", anchor: 10 },
    { mode: "HARD", anchor: 5 },
    { mode: "EMERGENCY", anchor: 3 },
  ] as const)("$mode keeps the last $anchor messages verbatim even when they are weak", async ({ mode, anchor }) => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    const original = await say(deps, key, "USER", "Write the quarterly report.");
    const weak = await sayMany(deps, key, 20, ["STRENGTH:weak"]);
    const result = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: mode });
    expect(result).toMatchObject({ mode, compacted: true, compactedMessages: 20 - anchor });
    expect(foldedIds(fake)).toEqual(ids(weak.slice(0, 20 - anchor)));
    expect(await activeIds(key)).toEqual([original.id, ...ids(weak.slice(20 - anchor))]);
    expect(await checkInvariants(store, key, { settled: true, mustStayActive: [original.id] })).toEqual([]);
  });

  it("does nothing while the active messages number keepRecent or fewer, and folds past it", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Draft the onboarding email.");
    await sayMany(deps, key, 9, ["STRENGTH:weak"]);
    const atLimit = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
    expect(atLimit).toMatchObject({ compacted: false, reason: "keep_recent", compactedMessages: 0 });
    expect(fake.calls).toEqual([]);

    await say(deps, key, "USER", "Also mention the parking rules.", { tags: ["STRENGTH:weak"] });
    const past = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
    expect(past).toMatchObject({ compacted: true, compactedMessages: 11 - 1 - 3 });
    expect(fake.calls).toHaveLength(1);
  });

  it("never folds the triggering turn: the newest USER message and everything after it", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Tune the search ranking.");
    const older: Message[] = [];
    for (let i = 0; i < 6; i++) older.push(await say(deps, key, "ASSISTANT", `older note ${i}`, { tags: ["STRENGTH:weak"] }));
    // Weak, trivial and far outside EMERGENCY's anchor of 3: only the trigger rule keeps them.
    const trigger = await say(deps, key, "USER", "ok", { tags: ["STRENGTH:weak"] });
    const after: Message[] = [];
    for (let i = 0; i < 8; i++) after.push(await say(deps, key, "ASSISTANT", i % 2 ? "Let me check." : `step ${i} done`, { tags: ["STRENGTH:weak"] }));
    const result = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
    expect(result).toMatchObject({ compacted: true, compactedMessages: 6 });
    expect(foldedIds(fake)).toEqual(ids(older));
    expect(await checkInvariants(store, key, { settled: true, mustStayActive: [trigger.id, ...ids(after)] })).toEqual([]);
  });

  it("folds the triggering turn's tool groups older than the anchor in EMERGENCY, whole groups only", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Tune the search ranking.");
    const trigger = await say(deps, key, "USER", "Go through every ranking test.");
    const narration = await say(deps, key, "ASSISTANT", "I will read the tests one by one and note what fails.");
    const groups: Message[][] = [];
    for (let i = 0; i < 4; i++) {
      const callMessage = await say(deps, key, "ASSISTANT", "", { toolCalls: [{ id: `q${i}`, name: "read_file", arguments: `{"path":"t${i}.ts"}` }] });
      groups.push([callMessage, await say(deps, key, "TOOL", `contents of t${i}.ts: ${"x".repeat(200)}`, { toolCallId: `q${i}` })]);
    }
    // EMERGENCY's anchor of 3 reaches into the third group (its result), so that group stays whole.
    const result = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
    expect(result).toMatchObject({ compacted: true, compactedMessages: 4 });
    expect(foldedIds(fake)).toEqual(ids([...groups[0]!, ...groups[1]!]));
    const stay = [trigger, narration, ...groups[2]!, ...groups[3]!];
    expect(await checkInvariants(store, key, { settled: true, mustStayActive: ids(stay) })).toEqual([]);
  });

  it("folds a tool call with its results or keeps them together", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Find where invoices are parsed.");
    const a1 = await say(deps, key, "ASSISTANT", "Searching the repository.", { toolCalls: [{ id: "c1", name: "grep", arguments: '{"q":"invoice"}' }] });
    const t1 = await say(deps, key, "TOOL", "src/invoice.ts:12 parseInvoice", { toolCallId: "c1" });
    const a2 = await say(deps, key, "ASSISTANT", "Reading both files.", {
      toolCalls: [
        { id: "c2", name: "read", arguments: '{"path":"a.ts"}' },
        { id: "c3", name: "read", arguments: '{"path":"b.ts"}' },
      ],
    });
    const t2 = await say(deps, key, "TOOL", "contents of a.ts: exports parseInvoice", { toolCallId: "c2" });
    const t3 = await say(deps, key, "TOOL", "contents of b.ts: the tax rules", { toolCallId: "c3", tags: ["STRENGTH:strong"] });
    const normal = [
      await say(deps, key, "ASSISTANT", "The parser lives in src/invoice.ts."),
      await say(deps, key, "USER", "Does it handle credit notes?"),
      await say(deps, key, "ASSISTANT", "Credit notes are parsed as negative invoices."),
    ];
    const a4 = await say(deps, key, "ASSISTANT", "Checking the tests.", { toolCalls: [{ id: "c4", name: "grep", arguments: '{"q":"credit"}' }] });
    const n4 = await say(deps, key, "ASSISTANT", "While that runs: the schema has 14 columns.");
    const n5 = await say(deps, key, "ASSISTANT", "And the importer batches 500 rows.");
    const t4 = await say(deps, key, "TOOL", "test/credit.test.ts", { toolCallId: "c4" }); // inside the anchor of 5
    await say(deps, key, "ASSISTANT", "Found the credit note tests.");
    await say(deps, key, "USER", "Great, add one for zero amounts.");

    const result = await compactIfNeeded(deps, key, hard());
    expect(result.compacted).toBe(true);
    // c1 folds whole; c2/c3 stay because a result is strong; c4 stays because its result is anchored.
    expect(foldedIds(fake)).toEqual([a1.id, t1.id, ...ids(normal)]);
    const sent = fake.calls[0]!.messages;
    expect(sent[0]).toMatchObject({ id: a1.id, toolCalls: [{ id: "c1", name: "grep" }] });
    expect(sent[1]).toMatchObject({ id: t1.id, toolCallId: "c1" });
    expect(await checkInvariants(store, key, { settled: true, mustStayActive: ids([a2, t2, t3, a4, n4, n5, t4]) })).toEqual([]);
  });
});

describe("the summary chain", () => {
  it("keeps exactly one active summary over three compactions, with a navigable supersede chain", async () => {
    const { deps, fake } = harness();
    fake.script = [
      { ok: true, summary: "Summary one: importer scope agreed." },
      { ok: true, summary: "Summary two: parser done, tax rules open." },
      { ok: true, summary: "Summary three: everything shipped." },
    ];
    const key = await newProcess(deps);
    const appended = [(await say(deps, key, "USER", "Build the importer.")).id];
    const memoryIds: string[] = [];
    for (let round = 0; round < 3; round++) {
      appended.push(...ids(await sayMany(deps, key, 12, [], `round ${round}`)));
      const result = await compactIfNeeded(deps, key, hard());
      expect(result.compacted).toBe(true);
      memoryIds.push(result.memoryId!);
      expect(await checkInvariants(store, key, { appendedIds: appended, settled: true, noLease: true })).toEqual([]);
    }
    const [m1, m2, m3] = await Promise.all(memoryIds.map((id) => store.getMemory(key, id)));
    expect(m1!.metadata.supersededMemoryId).toBeUndefined();
    expect(m1).toMatchObject({ supersededByMemoryId: m2!.id, supersededAt: expect.any(String) });
    expect(m2).toMatchObject({ supersededByMemoryId: m3!.id, supersededAt: expect.any(String), metadata: { supersededMemoryId: m1!.id } });
    expect(m3).toMatchObject({ supersededAt: null, metadata: { supersededMemoryId: m2!.id } });
    expect(m3!.supersededByMemoryId).toBeUndefined();
    expect(Date.parse(m1!.supersededAt!)).toBeLessThanOrEqual(Date.parse(m2!.supersededAt!));

    // Navigable both ways, from the newest back and from the oldest forward.
    const all = new Map((await store.listMemories(key)).map((m) => [m.id, m]));
    const back: string[] = [];
    for (let id: string | undefined = m3!.id; id; id = all.get(id)!.metadata.supersededMemoryId) back.push(id);
    const forward: string[] = [];
    for (let id: string | undefined = m1!.id; id; id = all.get(id)!.supersededByMemoryId) forward.push(id);
    expect(back).toEqual([m3!.id, m2!.id, m1!.id]);
    expect(forward).toEqual([m1!.id, m2!.id, m3!.id]);

    // Each summarizer call got the previous summary; sourceRefs are this compaction's messages only.
    expect(fake.calls.map((c) => c.priorSummary)).toEqual([null, m1!.content, m2!.content]);
    const refs = [m1, m2, m3].flatMap((m) => m!.sourceRefs);
    expect(new Set(refs).size).toBe(refs.length);
    expect(refs.sort()).toEqual(foldedIds(fake).sort());

    const state = (await store.getProcess(key))!;
    expect(state.activeSummaryId).toBe(m3!.id);
    const context = await composeContext(deps, key, await settledView(deps, key));
    expect(context.block).toContain("## Earlier Conversation (compacted)\nSummary three: everything shipped.");
    expect(context.block).not.toContain("Summary one");
    expect(context.block).not.toContain("Summary two");
  });
});

describe("a failing summarizer", () => {
  let server: LlmWireServer;
  beforeAll(async () => {
    server = await startLlmWireServer();
  });
  afterAll(async () => server?.close());

  type Failure = { name: string; setup: (h: ReturnType<typeof harness>) => void; error: RegExp };
  const failures: Failure[] = [
    // The tenant sees the failure's code, never the summarizer's words (docs/summarizers.md, "Failures").
    {
      name: "answers ok:false",
      setup: (h) => h.fake.script.push({ ok: false, failure: { kind: "provider_rate_limited", retryable: true, message: "rate limited by provider" } }),
      error: /provider_rate_limited/,
    },
    { name: "throws", setup: (h) => h.fake.script.push(new Error("adapter exploded")), error: /summarizer_error/ },
    { name: "answers a blank summary", setup: (h) => h.fake.script.push({ ok: true, summary: "  \n " }), error: /empty summary/ },
    {
      name: "times out (OpenAI adapter against a server that does not answer in time)",
      setup: (h) => {
        server.setFallback({ delayMs: 3_000, body: chatCompletionBody("<summary>too late</summary>") });
        const slow = createOpenAISummarizer({
          baseURL: `${server.url}/v1`,
          apiKey: "test",
          retry: { attemptTimeoutMs: 200, maxAttempts: 1, deadlineMs: 400 },
        });
        h.deps.summarizer = async () => slow;
      },
      error: /provider_timeout/,
    },
  ];

  it.each(failures)("that $name writes a FAILED row and leaves the replay untouched", async ({ setup, error }) => {
    const h = harness();
    const { deps } = h;
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Plan the data migration.");
    await sayMany(deps, key, 12, [], "first");
    const good = await compactIfNeeded(deps, key, hard());
    expect(good.compacted).toBe(true);
    await sayMany(deps, key, 12, [], "second");

    const contextBefore = await composeContext(deps, key, await settledView(deps, key));
    const viewBefore = (await store.activeView(key))!;
    setup(h);
    const failed = await compactIfNeeded(deps, key, hard());

    expect(failed).toMatchObject({ mode: "HARD", compacted: false, compactedMessages: 0, reason: expect.stringMatching(/^summarizer_failed: /) });
    expect(failed.reason).toMatch(error);
    expect(failed.tokensAfter).toBe(failed.tokensBefore);
    const row = await store.getMemory(key, failed.memoryId!);
    expect(row).toMatchObject({ status: "FAILED", supersededAt: null, content: "", metadata: { error: expect.stringMatching(error) } });
    expect(row!.sourceRefs.length).toBeGreaterThan(0);

    const viewAfter = (await store.activeView(key))!;
    expect(ids(viewAfter.messages)).toEqual(ids(viewBefore.messages));
    expect(ids(viewAfter.summaries)).toEqual([good.memoryId]);
    expect(viewAfter.state.version).toBe(viewBefore.state.version);
    expect(viewAfter.state.lease).toBeNull();
    expect(await composeContext(deps, key, await settledView(deps, key))).toEqual(contextBefore);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);

    // The next good compaction chains onto the last good summary, never onto the failure.
    deps.summarizer = async () => h.fake;
    const next = await compactIfNeeded(deps, key, hard());
    expect(next.compacted).toBe(true);
    expect((await store.getMemory(key, next.memoryId!))!.metadata.supersededMemoryId).toBe(good.memoryId);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("the request and its result", () => {
  it("passes force's instructions to the summarizer", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Compare three CRMs.");
    await sayMany(deps, key, 14, ["STRENGTH:weak"]);
    const result = await compactIfNeeded(deps, key, {
      model: { contextWindow: WINDOW },
      force: "SOFT",
      instructions: "Keep every vendor name and price.",
    });
    expect(result).toMatchObject({ mode: "SOFT", compacted: true });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.instructions).toBe("Keep every vendor name and price.");
  });

  it("reports tokensAfter below tokensBefore, from its own estimate and from prompt.tokens", async () => {
    const { deps } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Summarize the incident.");
    await sayMany(deps, key, 20, [], "incident");
    const before = (await store.activeView(key))!;
    const own = await compactIfNeeded(deps, key, hard());
    const after = (await store.activeView(key))!;
    expect(own.tokensBefore).toBe(replayTokens(before));
    expect(own.tokensAfter).toBe(replayTokens(after));
    expect(own.tokensAfter).toBeLessThan(own.tokensBefore);

    await sayMany(deps, key, 20, [], "more");
    const mid = (await store.activeView(key))!;
    const told = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 90_000 } });
    const end = (await store.activeView(key))!;
    expect(told).toMatchObject({ mode: "HARD", compacted: true, tokensBefore: 90_000 });
    expect(told.tokensAfter).toBeLessThan(90_000);
    // The engine's prompt holds more than the replay: it saves at least what the replay shrank.
    expect(90_000 - told.tokensAfter).toBeGreaterThanOrEqual(replayTokens(mid) - replayTokens(end));
  });

  it("knows the window of a named model and asks for it for an unknown one", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Refactor the auth module.");
    await sayMany(deps, key, 14);
    // gpt-4o has 128k tokens: 120k is past the hard threshold of 0.85.
    const known = await compactIfNeeded(deps, key, { model: { name: "gpt-4o" }, prompt: { tokens: 120_000 } });
    expect(known).toMatchObject({ mode: "HARD", compacted: true });

    const calls = fake.calls.length;
    const memories = (await store.listMemories(key)).length;
    const unknown = compactIfNeeded(deps, key, { model: { name: "my-local-llama" }, prompt: { tokens: 120_000 } });
    await expect(unknown).rejects.toBeInstanceOf(AppError);
    await expect(unknown).rejects.toMatchObject({ kind: "input", code: "model.context_window_required" });
    await expect(compactIfNeeded(deps, key, { model: {} })).rejects.toMatchObject({ code: "model.context_window_required" });
    expect(fake.calls).toHaveLength(calls);
    expect(await store.listMemories(key)).toHaveLength(memories);
  });

  it("fails with 404 for an unknown process", async () => {
    const { deps } = harness();
    await expect(compactIfNeeded(deps, { tenantId: TENANT, processId: "nobody" }, hard())).rejects.toMatchObject({
      kind: "not_found",
      code: "process.not_found",
    });
  });
});

describe("chunking a fold for a small summarizer", () => {
  /** Chunks one after the other, each given the previous output (summarizerConcurrency 1). */
  const CHAINED = { COMPACTION_SUMMARIZER_CONCURRENCY: "1" };

  it("makes several chained summarizer calls, each under the input cap", async () => {
    const fake = createFakeSummarizer({ contextWindow: 4_000, maxOutputTokens: 200 });
    fake.script = Array.from({ length: 20 }, (_, k) => async () => ({ ok: true as const, summary: `chunk summary ${k}` }));
    const { deps } = harness({ fake, env: CHAINED });
    const cap = summarizerInputCap(DEFAULT_TUNABLES, fake.contextWindow, fake.maxOutputTokens);
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Review the vendor contracts.");
    for (let i = 0; i < 24; i++) {
      await say(deps, key, i % 2 ? "USER" : "ASSISTANT", `Clause ${i}: ${"the supplier shall deliver on time and in full. ".repeat(8)}`);
    }
    const result = await compactIfNeeded(deps, key, hard());
    expect(result.compacted).toBe(true);

    expect(fake.calls.length).toBeGreaterThanOrEqual(3);
    for (const call of fake.calls) {
      expect(call.messages.reduce((n, m) => n + sourceChars(m), 0)).toBeLessThanOrEqual(cap);
    }
    // Chained: call k+1 gets call k's output as its prior summary.
    expect(fake.calls.map((c) => c.priorSummary)).toEqual([null, ...fake.calls.slice(1).map((_, k) => `chunk summary ${k}`)]);
    // In order, each folded message exactly once, and the stored summary is the last call's output.
    const memory = (await store.getMemory(key, result.memoryId!))!;
    expect(foldedIds(fake)).toEqual(memory.sourceRefs);
    expect(memory.content).toBe(`chunk summary ${fake.calls.length - 1}`);
    expect(memory.metadata.summarizerCalls).toBe(fake.calls.length);
  });

  it("fails as a whole when a later chunk fails: one FAILED row, nothing archived", async () => {
    const fake = createFakeSummarizer({ contextWindow: 4_000, maxOutputTokens: 200 });
    fake.script = [{ ok: true, summary: "first chunk" }, { ok: false, failure: { kind: "model_refused", retryable: false, message: "second chunk refused" } }];
    const { deps } = harness({ fake, env: CHAINED });
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Review the vendor contracts.");
    for (let i = 0; i < 24; i++) {
      await say(deps, key, i % 2 ? "USER" : "ASSISTANT", `Clause ${i}: ${"the supplier shall deliver on time and in full. ".repeat(8)}`);
    }
    const before = await activeIds(key);
    const result = await compactIfNeeded(deps, key, hard());
    expect(result).toMatchObject({ compacted: false, reason: "summarizer_failed: model_refused" });
    expect(fake.calls).toHaveLength(2);
    const memories = await store.listMemories(key);
    expect(memories).toHaveLength(1);
    expect(memories[0]).toMatchObject({ status: "FAILED", metadata: { error: "model_refused", summarizerCalls: 2 } });
    expect(await activeIds(key)).toEqual(before);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("summarizing a large fold in parallel", () => {
  async function contracts(deps: ServiceDeps) {
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Review the vendor contracts.");
    for (let i = 0; i < 24; i++) {
      await say(deps, key, i % 2 ? "USER" : "ASSISTANT", `Clause ${i}: ${"the supplier shall deliver on time and in full. ".repeat(8)}`);
    }
    return key;
  }

  it("summarizes the chunks concurrently (bounded) and merges them with the prior summary in one more call", async () => {
    const fake = createFakeSummarizer({ contextWindow: 4_000, maxOutputTokens: 200 });
    let inFlight = 0;
    let peak = 0;
    // Each call holds until two are in flight at once: a fold that ran them one at a time would
    // never get there, one that ran them unbounded would start them all before any returns.
    let twoInFlight!: () => void;
    const two = new Promise<void>((r) => (twoInFlight = r));
    fake.script = Array.from({ length: 40 }, () => async (input: SummarizeInput) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      if (inFlight === 2) twoInFlight();
      await two;
      inFlight--;
      return { ok: true as const, summary: `sum(${input.messages.map((m) => m.id).join(",")})` };
    });
    const { deps, metrics } = harness({ fake, env: { COMPACTION_SUMMARIZER_CONCURRENCY: "2" } });
    const cap = summarizerInputCap(DEFAULT_TUNABLES, fake.contextWindow, fake.maxOutputTokens);
    const key = await contracts(deps);
    const result = await compactIfNeeded(deps, key, hard());
    expect(result.compacted).toBe(true);

    const chunkCalls = fake.calls.slice(0, -1);
    const merge = fake.calls[fake.calls.length - 1]!;
    expect(chunkCalls.length).toBeGreaterThanOrEqual(3);
    expect(peak).toBe(2);
    for (const call of chunkCalls) {
      expect(call.priorSummary).toBeNull();
      expect(call.messages.reduce((n, m) => n + sourceChars(m), 0)).toBeLessThanOrEqual(cap);
    }
    // Every folded message went to exactly one chunk call, in order.
    const memory = (await store.getMemory(key, result.memoryId!))!;
    expect(chunkCalls.flatMap((c) => c.messages.map((m) => m.id))).toEqual(memory.sourceRefs);
    // The merge call gets the partial summaries, oldest first, and stores its own output.
    expect(merge.instructions).toContain("Merge them");
    expect(merge.messages.map((m) => m.content.split("\n")[1])).toEqual(chunkCalls.map((c) => `sum(${c.messages.map((m) => m.id).join(",")})`));
    expect(memory.content).toBe(`sum(${merge.messages.map((m) => m.id).join(",")})`);
    expect(memory.metadata.summarizerCalls).toBe(fake.calls.length);
    expect(memory.metadata.summarizerMs).toBeGreaterThan(0);
    expect(metrics.wallTimes).toEqual([{ mode: "hard", ms: memory.metadata.summarizerMs, provider: memory.metadata.provider }]);
    expect(metrics.folds).toEqual(["ok"]);
  });

  it("passes the prior summary to the merge call only", async () => {
    const fake = createFakeSummarizer({ contextWindow: 4_000, maxOutputTokens: 200 });
    const { deps } = harness({ fake });
    const key = await contracts(deps);
    const first = await compactIfNeeded(deps, key, hard());
    const prior = (await store.getMemory(key, first.memoryId!))!;
    await sayMany(deps, key, 24, [], `Clause ${"the supplier shall deliver on time and in full. ".repeat(8)}`);
    fake.calls.length = 0;
    const second = await compactIfNeeded(deps, key, hard());
    expect(second.compacted).toBe(true);
    expect(fake.calls.length).toBeGreaterThanOrEqual(3);
    expect(fake.calls.slice(0, -1).every((c) => c.priorSummary === null)).toBe(true);
    expect(fake.calls[fake.calls.length - 1]!.priorSummary).toBe(prior.content);
    const memory = (await store.getMemory(key, second.memoryId!))!;
    expect(memory.metadata.supersededMemoryId).toBe(prior.id);
  });

  it("fails as a whole when one parallel chunk fails: one FAILED row, nothing archived, no merge call", async () => {
    const fake = createFakeSummarizer({ contextWindow: 4_000, maxOutputTokens: 200 });
    fake.script = [{ ok: true, summary: "first chunk" }, { ok: false, failure: { kind: "model_refused", retryable: false, message: "second chunk refused" } }];
    const { deps } = harness({ fake });
    const key = await contracts(deps);
    const before = await activeIds(key);
    const result = await compactIfNeeded(deps, key, hard());
    expect(result).toMatchObject({ compacted: false, reason: "summarizer_failed: model_refused" });
    expect(fake.calls.every((c) => !c.instructions?.includes("Merge them"))).toBe(true);
    const memories = await store.listMemories(key);
    expect(memories).toHaveLength(1);
    expect(memories[0]).toMatchObject({ status: "FAILED", metadata: { error: "model_refused" } });
    expect(await activeIds(key)).toEqual(before);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("a fold larger than one transaction", () => {
  it("folds 500 messages: each transaction holds at most 100 items and the rest rolls forward in transactions", async () => {
    // A client of our own, to observe the size of every transaction the store sends.
    const observed = createDocumentClient({ endpoint });
    const transactions: number[] = [];
    observed.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { TransactItems?: unknown[] };
        if (input.TransactItems) transactions.push(input.TransactItems.length);
        return next(args);
      },
      { step: "initialize", name: "recordTransactionSize" },
    );
    const observedStore = createDynamoStore({ client: observed, tableName });
    const { deps, fake } = harness({ store: observedStore });
    const key = await newProcess(deps);
    const messages = await seedImported(client, tableName, key, 505);

    const result = await compactIfNeeded(deps, key, hard());
    expect(result).toMatchObject({ compacted: true, compactedMessages: 500 });
    expect(fake.calls).toHaveLength(1);
    // The commit (memory + META + 98 archives), then 98 archives per roll-forward step (+ META's
    // marker and the memory's status check), the last one clearing the marker.
    // First the day's usage, with its check that the tenant is not erased (docs/turns.md).
    expect(transactions).toEqual([2, TRANSACTION_LIMIT, TRANSACTION_LIMIT, TRANSACTION_LIMIT, TRANSACTION_LIMIT, TRANSACTION_LIMIT, 500 - 98 * 5 + 2]);
    const history = await readAllMessages(store, key);
    expect(history).toHaveLength(505);
    expect(history.filter((m) => m.archivedInMemoryId === result.memoryId)).toHaveLength(500);
    expect(await activeIds(key)).toEqual(ids(messages.slice(500)));
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });
});

describe("observability", () => {
  it("records one metric run, one INFO line and one MemoryCompacted event per compaction", async () => {
    const { deps, fake, metrics, log, bus } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Write the launch plan.");
    await sayMany(deps, key, 15);
    const result = await compactIfNeeded(deps, key, hard());
    const memory = (await store.getMemory(key, result.memoryId!))!;

    const { tokensBefore, tokensAfter } = memory.metadata;
    expect(tokensBefore! - tokensAfter!).toBeGreaterThan(0);
    expect(metrics.runs).toEqual([{ mode: "hard", compactedMessages: result.compactedMessages, tokensSaved: tokensBefore! - tokensAfter! }]);
    const info = log.entries.filter((e) => e.level === "INFO");
    expect(info).toHaveLength(1);
    expect(info[0]!.fields).toMatchObject({
      processId: key.processId,
      messagesFolded: result.compactedMessages,
      summaryChars: memory.content.length,
      memoryId: memory.id,
    });
    expect(bus.published()).toEqual([
      expect.objectContaining({
        source: "vancetope.memory",
        detailType: "MemoryCompacted",
        detail: { tenantId: TENANT, processId: key.processId, memoryId: memory.id, mode: "HARD", compactedMessages: result.compactedMessages, producedBy: "inline" },
      }),
    ]);

    // A no-op and a failure record no run and publish nothing; the failure logs a warning.
    await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 10 } });
    await sayMany(deps, key, 12);
    fake.script.push({ ok: false, failure: { kind: "summarizer_error", retryable: false, message: "quota exceeded" } });
    await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(metrics.runs).toHaveLength(1);
    expect(bus.published()).toHaveLength(1);
    expect(log.entries.filter((e) => e.level === "INFO")).toHaveLength(1);
    expect(log.entries.filter((e) => e.level === "WARN").map((e) => e.fields?.error)).toContain("quota exceeded");
  });

  it("tags metric runs with the mode: soft, hard, emergency", async () => {
    const { deps, metrics } = harness();
    for (const mode of ["SOFT", "HARD", "EMERGENCY"] as const) {
      const key = await newProcess(deps);
      await say(deps, key, "USER", "Plan the offsite.");
      await sayMany(deps, key, 14, ["STRENGTH:weak"]);
      await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: mode });
    }
    expect(metrics.runs.map((r) => r.mode)).toEqual(["soft", "hard", "emergency"]);
    expect(metrics.runs.map((r) => r.compactedMessages)).toEqual([14 - 10, 14 - 5, 14 - 3]);
  });
});

describe("tunables", () => {
  it("reads overrides from the environment (createDeps env)", async () => {
    const { deps, fake } = harness({ env: { COMPACTION_KEEP_RECENT: "30", COMPACTION_HARD_ANCHOR: "2" } });
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Plan the offsite.");
    await sayMany(deps, key, 20);
    expect(await compactIfNeeded(deps, key, hard())).toMatchObject({ compacted: false, reason: "keep_recent" });
    expect(fake.calls).toEqual([]);

    const other = harness({ env: { COMPACTION_HARD_ANCHOR: "2" } });
    const key2 = await newProcess(other.deps);
    await say(other.deps, key2, "USER", "Plan the offsite.");
    await sayMany(other.deps, key2, 20);
    expect(await compactIfNeeded(other.deps, key2, hard())).toMatchObject({ compacted: true, compactedMessages: 18 });
  });

  it("moves the thresholds with COMPACTION_*_THRESHOLD", async () => {
    const { deps } = harness({ env: { COMPACTION_HARD_THRESHOLD: "0.5", COMPACTION_SOFT_THRESHOLD: "0.2" } });
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Plan the offsite.");
    await sayMany(deps, key, 14);
    expect(await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 19_999 } })).toMatchObject({ mode: "NONE" });
    expect(await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 50_000 } })).toMatchObject({ mode: "HARD", compacted: true });
  });

  it("refuses a malformed environment at start, naming the variable", () => {
    expect(() => harness({ env: { COMPACTION_KEEP_RECENT: "ten" } })).toThrow(/COMPACTION_KEEP_RECENT/);
    expect(() => harness({ env: { COMPACTION_SOFT_THRESHOLD: "0.9" } })).toThrow(/hardThreshold|softThreshold/);
  });

  it("applies tenant settings, and project settings over them, to the processes they cover", async () => {
    const tenant = "settings-co";
    const { deps } = harness();
    const make = async (projectId: string) => {
      const key = { tenantId: tenant, processId: `set-${++seq}` };
      await upsertProcess(deps, tenant, key.processId, { projectId });
      await say(deps, key, "USER", "Plan the offsite.");
      await sayMany(deps, key, 14);
      return key;
    };
    await deps.tunables.save(tenant, undefined, { keepRecent: 40 }, new Date().toISOString());
    await deps.tunables.save(tenant, "fast", { keepRecent: 4, hardAnchor: 1 }, new Date().toISOString());
    const slow = await make("slow");
    const fast = await make("fast");
    expect(await compactIfNeeded(deps, slow, hard())).toMatchObject({ compacted: false, reason: "keep_recent" });
    expect(await compactIfNeeded(deps, fast, hard())).toMatchObject({ compacted: true, compactedMessages: 13 });
  });
});
