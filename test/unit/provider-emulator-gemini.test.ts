/**
 * The emulator's Gemini rules on thought signatures, as pure functions: where the current turn
 * starts, and the signature each step's first function call must carry.
 */
import { describe, expect, it } from "vitest";
import {
  buildGeminiResponse,
  checkGeminiRequest,
  geminiCurrentTurnStart,
} from "../../tools/provider-emulator/gemini-rules.js";
import { createSigner } from "../../tools/provider-emulator/signing.js";

const signer = createSigner();
const user = (text: string) => ({ role: "user", parts: [{ text }] });
/** The responses to one step's calls, in one content (as many as the step made). */
const result = (...names: string[]) => ({ role: "user", parts: names.map((name) => ({ functionResponse: { name, response: { ok: true } } })) });

function modelCalls(...names: string[]) {
  const body = buildGeminiResponse({}, { functionCalls: names.map((name) => ({ name, args: { q: name } })) }, { signer, model: "gemini-3-pro" });
  return structuredClone(body.candidates[0]!.content);
}

describe("Gemini thought signature rules", () => {
  it("signs only the first of parallel function calls, and the last part of a text answer", () => {
    const parallel = modelCalls("a", "b");
    expect(parallel.parts.map((p: any) => typeof p.thoughtSignature)).toEqual(["string", "undefined"]);
    const text = buildGeminiResponse({}, { text: "done" }, { signer, model: "m" }).candidates[0]!.content;
    expect(text.parts).toEqual([{ text: "done", thoughtSignature: expect.any(String) }]);
  });

  it("starts the current turn after the latest user message with text, not after function responses", () => {
    const contents = [user("q1"), modelCalls("a"), result("a"), user("q2"), modelCalls("b"), result("b")];
    expect(geminiCurrentTurnStart(contents)).toBe(4);
  });

  it("accepts a current turn whose steps carry their signatures", () => {
    const contents = [user("q"), modelCalls("a", "b"), result("a", "b"), modelCalls("c"), result("c")];
    expect(checkGeminiRequest({ contents }, { signer })).toEqual({ ok: true, verified: ["contents.1.parts.0", "contents.3.parts.0"] });
  });

  it("rejects a current-turn step whose first function call lost its signature, in Google's error shape", () => {
    const step = modelCalls("read_log");
    delete step.parts[0].thoughtSignature;
    const check = checkGeminiRequest({ contents: [user("q"), step, result("read_log")] }, { signer });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.rule).toBe("thought_signature_missing");
    expect(check.body).toEqual({ error: { code: 400, message: check.message, status: "INVALID_ARGUMENT" } });
    expect(check.message).toContain("Function call is missing a thought_signature in functionCall parts");
    expect(check.message).toContain("`default_api:read_log` , position 1");
  });

  it("does not validate steps of earlier turns", () => {
    const old = modelCalls("a");
    delete old.parts[0].thoughtSignature;
    const contents = [user("q1"), old, result("a"), user("q2")];
    expect(checkGeminiRequest({ contents }, { signer }).ok).toBe(true);
  });

  it("rejects a signature moved onto a different function call", () => {
    const step = modelCalls("a");
    step.parts[0].functionCall.args = { q: "changed" };
    const check = checkGeminiRequest({ contents: [user("q"), step, result("a")] }, { signer });
    expect(!check.ok && [check.rule, check.message]).toEqual(["thought_signature_invalid", "Corrupted thought signature."]);
  });
});
