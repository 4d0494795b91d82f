/**
 * What a tenant sees of a summarizer provider's failure (docs/summarizers.md, "Failures"): a
 * stable code in `reason`, in a FAILED memory's `metadata.error` and in a discarded job's
 * `discardReason`, while the provider's own text, which may quote a key fragment or an internal
 * host, stays in the log. Through the real OpenAI and Anthropic SDKs against the local wire
 * server, and DynamoDB Local.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import { createAnthropicSummarizer } from "../../core/adapters/llm/anthropic-summarizer.js";
import { createOpenAISummarizer } from "../../core/adapters/llm/openai-summarizer.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { createMemoryLog } from "../support/memory-log.js";
import {
  anthropicErrorBody,
  chatCompletionBody,
  openAIErrorBody,
  startLlmWireServer,
  type LlmWireServer,
  type ScriptedReply,
} from "../../tools/llm-wire-server.js";
import { testContainer } from "../support/container.js";
import { appendWarehouseMove } from "../support/steps.js";

const TENANT = "provider-errors";
const WINDOW = 10_000;
/** What a provider may put in an error: a key fragment and an internal host. */
const LEAK = "Incorrect API key provided: sk-proj-AbC1***********************wxyz (via llm-gw.corp.internal:8443)";
const leaks = (value: unknown) => /sk-proj|llm-gw\.corp\.internal/.test(JSON.stringify(value));

let store: Store;
let server: LlmWireServer;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("perr"));
  server = await startLlmWireServer();
});
afterAll(async () => server?.close());

const openai = () => createOpenAISummarizer({ baseURL: `${server.url}/v1`, apiKey: "test", retry: { maxAttempts: 1 } });
const anthropic = () => createAnthropicSummarizer({ baseURL: server.url, apiKey: "test", retry: { maxAttempts: 1 } });

const harness = (summarizer: Summarizer, env: Record<string, string> = {}) => testContainer({ store, env, summarizer, retryDelaysMs: [] });

async function seeded(deps: ServiceDeps, n = 24): Promise<ProcessKey> {
  const key = { tenantId: TENANT, processId: `pe-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  await appendWarehouseMove(deps, key, n);
  return key;
}

/** The log lines that carry the provider's text: the failed compaction's warning. */
const failureLogs = (log: ReturnType<typeof createMemoryLog>) => log.entries.filter((e) => e.message === "compaction failed: summarizer");

describe("a provider failure in an inline compaction", () => {
  // [case, adapter, the provider's reply, the code tenants see, whether the log quotes the provider]
  const cases: Array<[string, () => Summarizer, ScriptedReply, string, boolean]> = [
    ["OpenAI 401 quoting a key fragment", openai, { status: 401, body: openAIErrorBody(LEAK, "invalid_request_error") }, "provider_rejected", true],
    ["OpenAI 429", openai, { status: 429, body: openAIErrorBody(`Rate limit reached for org-9f2c on ${LEAK}`, "rate_limit_error") }, "provider_rate_limited", true],
    ["OpenAI 503", openai, { status: 503, body: openAIErrorBody(`upstream ${LEAK} unavailable`) }, "provider_unavailable", true],
    ["an OpenAI answer without a summary block", openai, { body: chatCompletionBody(`Sure. ${LEAK}`) }, "answer_unusable", false],
    ["an OpenAI refusal", openai, { body: refusalBody(`I can't help with ${LEAK}`) }, "model_refused", true],
    ["Anthropic 403", anthropic, { status: 403, body: anthropicErrorBody(LEAK, "permission_error") }, "provider_rejected", true],
    ["Anthropic 529", anthropic, { status: 529, body: anthropicErrorBody(`overloaded at ${LEAK}`, "overloaded_error") }, "provider_unavailable", true],
  ];

  it.each(cases)("%s: the tenant sees the code, the log keeps the text", async (_name, make, reply, code, quoted) => {
    server.reset();
    server.setFallback(reply);
    const { deps, log } = harness(make());
    const key = await seeded(deps);

    const result = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" });

    expect(result).toMatchObject({ compacted: false, reason: `summarizer_failed: ${code}` });
    const row = (await store.getMemory(key, result.memoryId!))!;
    expect(row).toMatchObject({ status: "FAILED", metadata: { error: code } });
    expect(leaks(row)).toBe(false);
    expect(leaks(result)).toBe(false);
    // The operator still reads what went wrong, in the provider's words where it gave some.
    expect(failureLogs(log)).toEqual([expect.objectContaining({ level: "WARN", fields: expect.objectContaining({ memoryId: row.id, code }) })]);
    expect(failureLogs(log)[0]!.fields!.error).not.toBe(code);
    expect(leaks(failureLogs(log))).toBe(quoted);
  });
});

describe("a provider failure in the compaction worker", () => {
  it("a prepare job that fails stores the code in its FAILED row", async () => {
    server.reset();
    server.setFallback({ status: 401, body: openAIErrorBody(LEAK, "invalid_request_error") });
    const { deps, log, requestFor } = harness(openai());
    const key = await seeded(deps, 30);
    const turn = await runTurn(deps, key, { message: { role: "USER", content: "Which aisle first?" }, model: { contextWindow: WINDOW }, prompt: { tokens: 7_200 } });
    const foldId = turn.compaction.memoryId!;
    expect(await handleCompactionRequested(deps, requestFor(foldId))).toMatchObject({ done: "failed" });
    const row = (await store.getMemory(key, foldId))!;
    expect(row).toMatchObject({ status: "FAILED", metadata: { error: "provider_rejected" } });
    expect(leaks(row)).toBe(false);
    expect(leaks(failureLogs(log))).toBe(true);
  });

  it("a manual job that fails is discarded with the code as its reason", async () => {
    server.reset();
    server.setFallback({ status: 503, body: openAIErrorBody(`upstream ${LEAK} unavailable`) });
    const { deps, requestFor } = harness(openai(), { COMPACTION_MANUAL_BUDGET_MS: "50" });
    const key = await seeded(deps);
    const stuck: Store = Object.create(store);
    stuck.acquireLease = () => new Promise(() => {});
    const manual = await compactManually({ ...deps, store: stuck }, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    const jobId = manual.result.memoryId!;
    await handleCompactionRequested(deps, requestFor(jobId));
    const row = (await store.getMemory(key, jobId))!;
    expect(row).toMatchObject({ status: "DISCARDED", metadata: { discardReason: "summarizer_failed: provider_unavailable" } });
    expect(leaks(row)).toBe(false);
  });
});

/** A Chat Completions answer whose message is a refusal. */
function refusalBody(refusal: string): Record<string, unknown> {
  const body = chatCompletionBody(null) as { choices: Array<{ message: Record<string, unknown> }> };
  body.choices[0]!.message.refusal = refusal;
  return body;
}
