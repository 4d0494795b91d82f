/** The local runner compacts through the adapter its environment selects. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicMessageBody, chatCompletionBody, startLlmWireServer, type LlmWireServer } from "../../tools/llm-wire-server.js";
import { startTestService } from "../support/service.js";

let llm: LlmWireServer;
beforeAll(async () => {
  llm = await startLlmWireServer();
});
afterAll(async () => llm?.close());

const answer = "<analysis>scratch work that must not be stored</analysis>\n<summary>Ana booked Lisbon for 3 May.</summary>";

async function compactOnce(env: Record<string, string>) {
  const { service, api } = await startTestService({ env });
  try {
    await api("PUT", "/v1/processes/sel", { body: { projectId: "p" } });
    for (let i = 0; i < 14; i++) {
      await api("POST", "/v1/processes/sel/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `turn ${i}: Ana plans a trip to Lisbon on 3 May` } });
    }
    const r = await api("POST", "/v1/processes/sel/compaction", { body: { model: { name: "gpt-4o" }, force: "HARD" } });
    const memories = (await api("GET", "/v1/processes/sel/memories?includeFailed=true")).body.items;
    return { result: r.body, memories };
  } finally {
    await service.stop();
  }
}

describe("summarizer selection in the local runner", () => {
  it("compacts through an OpenAI-compatible server when only OPENAI_BASE_URL is set", async () => {
    llm.reset();
    llm.setFallback({ body: chatCompletionBody(answer) });
    const { result, memories } = await compactOnce({ SUMMARIZER: "", OPENAI_BASE_URL: `${llm.url}/v1` });
    expect(result.compacted).toBe(true);
    expect(llm.requests.some((r) => r.path.endsWith("/chat/completions"))).toBe(true);
    expect(memories[0]).toMatchObject({ status: "OK", content: "Ana booked Lisbon for 3 May.", metadata: { provider: "openai" } });
  });

  it("compacts through the Anthropic adapter when only ANTHROPIC_BASE_URL is set", async () => {
    llm.reset();
    llm.setFallback({ body: anthropicMessageBody(answer) });
    const { result, memories } = await compactOnce({ SUMMARIZER: "", ANTHROPIC_BASE_URL: llm.url });
    expect(result.compacted).toBe(true);
    expect(llm.requests.some((r) => r.path.endsWith("/messages"))).toBe(true);
    expect(memories[0]).toMatchObject({ status: "OK", metadata: { provider: "anthropic" } });
  });

  it("compacts offline with nothing configured", async () => {
    llm.reset();
    const { result, memories } = await compactOnce({ SUMMARIZER: "" });
    expect(result.compacted).toBe(true);
    expect(llm.requests).toHaveLength(0);
    expect(memories[0]).toMatchObject({ status: "OK", metadata: { provider: "offline" } });
    expect(memories[0].content).toContain("Lisbon");
  });
});
