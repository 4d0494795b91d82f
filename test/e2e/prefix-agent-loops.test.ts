/**
 * A prompt that only grows between folds (docs/turns.md, "Append-only between folds"): 300-step
 * tool loops through the service against the provider emulator (tools/provider-emulator), on a
 * Claude model with preserved thinking, on the Responses API with encrypted reasoning and on Gemini
 * 3 with thought signatures, in a
 * window small enough that the worker folds several times. Every request is compared with the one
 * before: a turn that says `prefix.kept` must send the previous request plus what was appended,
 * and every other turn must name a fold. The emulator checks what the providers check.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { requestBreak } from "../../tools/prefix-check.js";
import type { Turn } from "../../client/index.js";
import { geminiCurrentTurnStart } from "../../tools/provider-emulator/gemini-rules.js";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";
import { anthropicStep, responsesStep } from "../support/engine-steps.js";

const STEPS = 300;
const WINDOW = 8_000;
const stack = serviceBeside(() => startProviderEmulator({ preservedThinking: true, preservedReasoning: true }));

/** A tool result of ~100 tokens, distinct per step. */
const output = (step: number) => `step ${step}: ${"the module exports a parser and a tokenizer; ".repeat(9)}`;

/** What one loop's turns said and did, for the checks every provider shares. */
interface LoopLog {
  /** Turns whose request does not start with the previous one, though `prefix.kept` said so. */
  lies: string[];
  /** `prefix.reason` of every turn that did not keep the prefix. */
  changes: string[];
  /** Summaries the turns replayed, in order, each once. */
  summaries: string[];
  /** Turns (1-based) whose request kept the previous one. */
  kept: Set<number>;
}

/** Runs `step` for each turn and checks its request against the previous one. */
async function loop(run: (step: number) => Promise<Turn>, steps = STEPS): Promise<LoopLog> {
  const log: LoopLog = { lies: [], changes: [], summaries: [], kept: new Set() };
  let previous: Record<string, unknown> | undefined;
  for (let step = 0; step <= steps; step++) {
    const turn = await run(step);
    const request = turn.request as unknown as Record<string, unknown>;
    if (turn.prefix.kept) {
      log.kept.add(step);
      const broken = previous ? requestBreak(previous, request) : "no previous request";
      if (broken) log.lies.push(`turn ${step}: ${broken}`);
    } else {
      log.changes.push(turn.prefix.reason ?? "?");
    }
    if (turn.summaryId && log.summaries.at(-1) !== turn.summaryId) log.summaries.push(turn.summaryId);
    previous = request;
    // The worker folds between turns, as its own Lambda would.
    await stack.ctx.service.bus.drain();
  }
  // PREFIX_LOOP_FIGURES=1 prints what the report quotes (docs/turns.md, "Append-only between folds").
  if (process.env.PREFIX_LOOP_FIGURES) console.info(JSON.stringify({ turns: steps + 1, kept: log.kept.size, changes: log.changes, folds: log.summaries.length }));
  return log;
}

/** What every loop holds to: no request refused, every `kept` true, folds happened and each was the one prefix change. */
function expectFoldsOnly(log: LoopLog, steps = STEPS) {
  expect(stack.provider.records.filter((r) => r.status !== 200).map((r) => `${r.rule}: ${r.message}`)).toEqual([]);
  expect(stack.provider.records).toHaveLength(steps + 1);
  expect(log.lies).toEqual([]);
  expect(log.summaries.length).toBeGreaterThanOrEqual(3);
  expect(log.changes).toEqual(["first_turn", ...log.summaries.map(() => "fold")]);
}

describe(`a ${STEPS}-step tool loop with folds`, { timeout: 600_000 }, () => {
  it("Claude with preserved thinking: 0 errors, each fold one prefix change, no kept turn's thinking sent after a fold but the open loop's", async () => {
    stack.provider.reset();
    const client = stack.memory;
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: stack.provider.url, maxRetries: 0 });
    const model = { name: "claude-fable-5-1", contextWindow: WINDOW };
    await client.upsertProcess("prefix-anthropic", { projectId: "agents" });
    stack.provider.anthropic.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        thinking: `Step ${i}: read the next file before deciding.`,
        toolUses: [{ id: `toolu_${i}`, name: "read_file", input: { path: `src/file-${i}.ts` } }],
      })),
      { thinking: "All files read.", text: `Done: ${STEPS} files read.` },
    );
    let next: Anthropic.ContentBlockParam[] = [{ type: "text", text: "Read every file of src/ and report." }];
    let role: "USER" | "TOOL" = "USER";
    /** Per fold turn: the open loop's turn the answer names, and the thinking the request sends. */
    const foldTurns: Array<{ openLoop: string | undefined; thinkingSentBy: string[] }> = [];
    const log = await loop(async (step) => {
      // An open tool loop's last assistant turn must come back with its thinking even when a fold
      // changed what stood before it: the API drops that one block instead of refusing.
      const thinking = { type: "enabled", budget_tokens: 2048, block_binding: { prefix_mismatch_behavior: "drop_block" } } as Anthropic.ThinkingConfigParam;
      const { turn, call } = await anthropicStep(client, anthropic, "prefix-anthropic", { role, content: next }, model, thinking);
      if (turn.prefix.reason === "fold") {
        const sent = (turn.request as unknown as { messages: Anthropic.MessageParam[] }).messages;
        const withThinking = turn.messages.filter((m) => m.role === "ASSISTANT" && (m.native?.content as Array<{ type: string }>).some((b) => b.type === "thinking"));
        const sentIds = withThinking.filter((m) => sent.some((s) => Array.isArray(s.content) && s.content.some((b) => b.type === "thinking" && (m.native?.content as Array<{ signature?: string }>).some((o) => "signature" in b && o.signature === b.signature)))).map((m) => m.id);
        foldTurns.push({ openLoop: turn.prefix.openLoop?.messageId, thinkingSentBy: sentIds });
      }
      next = call ? [{ type: "tool_result", tool_use_id: call.id, content: output(step) }] : [{ type: "text", text: "Thanks." }];
      role = call ? "TOOL" : "USER";
      return turn;
    });
    expectFoldsOnly(log);
    // Every fold lands inside the one unfinished loop: cut before its newest call turn, which the
    // answer names and which alone goes with its thinking.
    expect(foldTurns).toHaveLength(log.summaries.length);
    for (const f of foldTurns) expect(f.thinkingSentBy).toEqual([f.openLoop]);
    // Every thinking block sent verified, but one per fold: the open loop's turn, which the API
    // drops (drop_block) on each request until the next fold. Every other kept turn went without.
    const dropped = new Set(stack.provider.records.flatMap((r) => (r.thinking?.dropped ?? []).map((d) => d.token)));
    expect(dropped.size).toBeLessThanOrEqual(log.summaries.length);
    const verified = stack.provider.records.reduce((n, r) => n + (r.thinking?.verified.length ?? 0), 0);
    expect(verified).toBeGreaterThan(STEPS);
    if (process.env.PREFIX_LOOP_FIGURES) console.info(JSON.stringify({ thinkingVerified: verified, thinkingDroppedBlocks: dropped.size, drops: stack.provider.records.reduce((n, r) => n + (r.thinking?.dropped.length ?? 0), 0) }));
  });

  it("Responses API with encrypted reasoning: 0 errors, each fold one prefix change, 0 reasoning items dropped between folds", async () => {
    stack.provider.reset();
    const client = stack.memory;
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${stack.provider.url}/v1`, maxRetries: 0 });
    await client.upsertProcess("prefix-openai", { projectId: "agents" });
    stack.provider.openai.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        reasoning: `Step ${i}: run the next test file.`,
        functionCalls: [{ callId: `call_${i}`, name: "run_tests", arguments: { file: `test/${i}.test.ts` } }],
      })),
      { reasoning: "All green.", text: `${STEPS} test files pass.` },
    );
    let next: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Run every test file." }];
    const summaryPlaces: number[] = [];
    const breakpoints: boolean[] = [];
    let role: "USER" | "TOOL" = "USER";
    const log = await loop(async (step) => {
      const { turn, call } = await responsesStep(client, openai, "prefix-openai", { role, content: next }, { name: "gpt-6", contextWindow: WINDOW });
      const { input } = turn.request as unknown as { input: OpenAI.Responses.ResponseInputItem[] };
      // A summary the service wrote is appended after the turns the fold kept, never first (docs/turns.md, "What a fold may keep").
      const summaryAt = input.findIndex((i) => "role" in i && i.role === "developer" && JSON.stringify(i.content).includes("Earlier Conversation"));
      if (turn.summaryId) summaryPlaces.push(summaryAt);
      // gpt-6 takes explicit cache breakpoints: the summary, stable until the next fold, carries one (docs/turns.md, "Prompt caching").
      if (turn.summaryId) breakpoints.push(JSON.stringify(input[summaryAt]).includes('"prompt_cache_breakpoint":{"mode":"explicit"}'));
      next = call ? [{ type: "function_call_output", call_id: call.call_id, output: output(step) }] : [{ role: "user", content: "Thanks." }];
      role = call ? "TOOL" : "USER";
      return turn;
    });
    expectFoldsOnly(log);
    expect(summaryPlaces.length).toBeGreaterThan(0);
    expect(summaryPlaces.filter((at) => at < 1)).toEqual([]);
    expect(breakpoints.filter((b) => !b)).toEqual([]);
    // Reasoning items are dropped only by the first request after a fold, never between folds.
    const between = stack.provider.records.filter((_, i) => log.kept.has(i)).flatMap((r) => r.reasoning?.dropped ?? []);
    expect(between).toEqual([]);
    if (process.env.PREFIX_LOOP_FIGURES) console.info(JSON.stringify({ reasoning: stack.provider.openai.reasoningCounts(), droppedBetweenFolds: between.length }));
    expect(stack.provider.records.filter((_, i) => log.kept.has(i)).reduce((n, r) => n + (r.reasoning?.kept.length ?? 0), 0)).toBeGreaterThan(STEPS);
  });

  it("Gemini 3 with thought signatures: 0 errors, each fold one prefix change, every step of the current turn sent back signed", async () => {
    await geminiLoop("prefix-gemini", { turnSteps: 10, steps: STEPS });
  });

  it("Gemini 3, turns longer than the anchor: folds take whole turns, never a step of the current one", async () => {
    // A turn of 16 steps holds ~2,000 tokens: by tool groups, a HARD fold would take the current
    // turn's older steps; by Gemini's rule it takes only the turns before it.
    const { contents } = await geminiLoop("prefix-gemini-long", { turnSteps: 16, steps: 150 });
    // Every request after a fold starts at a turn's user message (the emulator refuses a history that starts with a call).
    expect(contents.filter((c) => c[0]?.role !== "user" || c[0]?.parts.some((p) => p.functionResponse)).length).toBe(0);
  });
});

/**
 * A Gemini tool loop of `steps` requests in turns of `turnSteps` function-calling steps and a
 * closing text: every step of the current turn must go back signed on every request.
 */
async function geminiLoop(processId: string, o: { turnSteps: number; steps: number }) {
  stack.provider.reset();
  const client = stack.memory;
  await client.upsertProcess(processId, { projectId: "agents" });
  const phase = (step: number) => step % (o.turnSteps + 1);
  stack.provider.gemini.script(
    ...Array.from({ length: o.steps + 1 }, (_, i) =>
      phase(i) < o.turnSteps ? { functionCalls: [{ id: `call_${i}`, name: "run_tests", args: { file: `test/${i}.test.ts` } }] } : { text: `Batch ${i} passes.` },
    ),
  );
  const tools = [{ functionDeclarations: [{ name: "run_tests", description: "Runs one test file", parameters: { type: "object", properties: {} } }] }];
  let next: unknown[] = [{ text: "Run the first batch of test files." }];
  let role: "USER" | "TOOL" = "USER";
  /** Per request: the current turn's model steps sent back, against the steps the turn has had. */
  const stepsSent: Array<{ step: number; sent: number; issued: number }> = [];
  const contents: Array<Array<{ role: string; parts: any[] }>> = [];
  const log = await loop(async (step) => {
    const turn = await client.beginTurn(processId, { message: { role, native: { format: "gemini", content: next } }, model: { name: "gemini-3-pro", contextWindow: WINDOW }, format: "gemini" });
    const request = turn.request as unknown as { contents: Array<{ role: string; parts: any[] }>; systemInstruction?: unknown };
    contents.push(request.contents);
    const res = await fetch(`${stack.provider.url}/v1beta/models/gemini-3-pro:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "test" },
      body: JSON.stringify({ ...request, tools }),
    });
    const body = (await res.json()) as { candidates: Array<{ content: { parts: any[] } }> };
    const current = request.contents.slice(geminiCurrentTurnStart(request.contents));
    stepsSent.push({ step, sent: current.filter((c) => c.role === "model" && c.parts.some((p) => p.functionCall)).length, issued: phase(step) });
    const parts = body.candidates[0]!.content.parts;
    await client.appendMessage(processId, { role: "ASSISTANT", native: { format: "gemini", content: parts } });
    const call = parts.find((p) => p.functionCall)?.functionCall as { id: string; name: string } | undefined;
    next = call ? [{ functionResponse: { id: call.id, name: call.name, response: { output: output(step) } } }] : [{ text: `Run batch ${step + 1}.` }];
    role = call ? "TOOL" : "USER";
    return turn;
  }, o.steps);
  expectFoldsOnly(log, o.steps);
  // Signatures kept: every step of the current turn goes back, signed, on every request.
  expect(stepsSent.filter((s) => s.sent !== s.issued)).toEqual([]);
  const verified = stack.provider.records.reduce((n, r) => n + (r.signatures?.verified.length ?? 0), 0);
  expect(verified).toBe(stepsSent.reduce((n, s) => n + s.issued, 0));
  return { contents };
}
