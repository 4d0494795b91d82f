/**
 * The provider emulator's Gemini rule through the documented REST shape (no Gemini SDK is a
 * dependency): a function-calling turn sent back with its thought signatures is accepted, one
 * without is Google's 400.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";

let emulator: ProviderEmulator;
beforeAll(async () => {
  emulator = await startProviderEmulator();
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => emulator.reset());

async function generateContent(body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${emulator.url}/v1beta/models/gemini-3-pro:generateContent`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "test" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

const tools = [{ functionDeclarations: [{ name: "read_log", description: "Reads a CI log", parameters: { type: "object", properties: {} } }] }];
const question = { role: "user", parts: [{ text: "Why does ci-7 fail?" }] };
const answer = { role: "user", parts: [{ functionResponse: { name: "read_log", response: { log: "ERROR: node 18" } } }] };

describe("provider emulator: Gemini thought signatures over REST", () => {
  it("accepts the current turn sent back with the model's parts as returned", async () => {
    emulator.gemini.script({ functionCalls: [{ name: "read_log", args: { runner: "ci-7" } }] }, { text: "ci-7 runs Node 18." });
    const first = await generateContent({ contents: [question], tools });
    expect(first.status).toBe(200);
    const modelTurn = first.json.candidates[0].content;
    expect(modelTurn.parts[0]).toEqual({ functionCall: { name: "read_log", args: { runner: "ci-7" } }, thoughtSignature: expect.any(String) });

    const second = await generateContent({ contents: [question, modelTurn, answer], tools });

    expect(second.status).toBe(200);
    expect(second.json.candidates[0].content.parts[0].text).toBe("ci-7 runs Node 18.");
    expect(emulator.records[1]!.signatures).toEqual({ verified: ["contents.1.parts.0"] });
  });

  it("answers Google's 400 INVALID_ARGUMENT when the current turn's function call lacks its signature", async () => {
    emulator.gemini.script({ functionCalls: [{ name: "read_log" }] });
    const first = await generateContent({ contents: [question], tools });
    const { thoughtSignature: _dropped, ...bare } = first.json.candidates[0].content.parts[0];

    const second = await generateContent({ contents: [question, { role: "model", parts: [bare] }, answer], tools });

    expect(second.status).toBe(400);
    expect(second.json.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(second.json.error.message).toMatch(/^Function call is missing a thought_signature in functionCall parts\./);
    expect(emulator.records[1]!.rule).toBe("thought_signature_missing");
  });

  it("answers 400 for a history cut inside a turn, or a function call parted from its response", async () => {
    emulator.gemini.script({ functionCalls: [{ name: "read_log" }] });
    const modelTurn = (await generateContent({ contents: [question], tools })).json.candidates[0].content;
    const rules: string[] = [];
    // Starts with the model's call: the user message of its turn was cut away.
    for (const contents of [[modelTurn, answer], [question, modelTurn, question, answer], [question, modelTurn, { role: "user", parts: [answer.parts[0], answer.parts[0]] }]]) {
      const res = await generateContent({ contents, tools });
      expect(res.status).toBe(400);
      expect(res.json.error.status).toBe("INVALID_ARGUMENT");
      rules.push(emulator.records.at(-1)!.rule!);
    }
    expect(rules).toEqual(["function_call_turn_order", "function_response_turn_order", "function_response_count"]);
  });

  it("streams with alt=sse, and applies the same rule to streamed requests", async () => {
    emulator.gemini.script({ functionCalls: [{ name: "read_log" }] });
    const res = await fetch(`${emulator.url}/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [question], tools }),
    });
    const text = await res.text();
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const chunk = JSON.parse(text.replace(/^data: /, ""));
    const part = chunk.candidates[0].content.parts[0];
    expect(part.thoughtSignature).toEqual(expect.any(String));

    const { thoughtSignature: _gone, ...bare } = part;
    const second = await fetch(`${emulator.url}/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [question, { role: "model", parts: [bare] }, answer], tools }),
    });
    expect(second.status).toBe(400);
    expect((await second.json()).error.status).toBe("INVALID_ARGUMENT");
  });
});
