/**
 * The integration examples in examples/: every one type-checks against the client's sources and
 * the real libraries, and those that need no Responses API run against the local runner, with a
 * local server speaking OpenAI's Chat Completions wire format standing in for the model.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { chatCompletionBody, startLlmWireServer } from "../../tools/llm-wire-server.js";
import { REPO, TSC } from "../support/packed-client.js";
import { serviceBeside } from "../support/service-beside.js";
import { KEY_A } from "../support/service.js";

const run = promisify(execFile);
const stack = serviceBeside(() => startLlmWireServer());

const example = (file: string, args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ["--import", "tsx", join(REPO, "examples", file), ...args], {
    cwd: REPO,
    env: {
      ...process.env,
      TSX_TSCONFIG_PATH: join(REPO, "examples/tsconfig.json"),
      MEMORY_URL: stack.ctx.service.url,
      MEMORY_API_KEY: KEY_A,
      OPENAI_BASE_URL: `${stack.provider.url}/v1`,
      OPENAI_API_KEY: "test",
      ...env,
    },
  });

describe("examples/", () => {
  it("type-check", async () => {
    const result = await run(process.execPath, [TSC, "-p", join(REPO, "examples/tsconfig.json")]).then(
      () => "",
      (e: { stdout: string }) => e.stdout,
    );
    expect(result).toBe("");
  }, 180_000);

  it("ai-sdk.ts: the model gets the replay, and the turn is stored", async () => {
    stack.provider.reset();
    stack.provider.reply({ body: chatCompletionBody("Hello, I remember nothing yet.") });
    const { stdout } = await example("ai-sdk.ts", ["Hello there"], { PROCESS_ID: "ex-ai" });
    expect(stdout.trim()).toBe("Hello, I remember nothing yet.");
    expect(stack.provider.requests[0]!.body.messages).toEqual([
      { role: "system", content: "You are a concise assistant." },
      { role: "user", content: "Hello there" },
    ]);
    const stored = await stack.memory.listMessages("ex-ai");
    expect(stored.items.map((m) => m.content)).toEqual(["Hello there", "Hello, I remember nothing yet."]);
  }, 120_000);

  it("tools.ts: the model's search_history call is answered from the service", async () => {
    stack.provider.reset();
    stack.provider.reply(
      {
        body: {
          ...chatCompletionBody(null),
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, refusal: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search_history", arguments: '{"query":"policy"}' } }] },
              finish_reason: "tool_calls",
              logprobs: null,
            },
          ],
        },
      },
      { body: chatCompletionBody("Nothing about a policy yet.") },
    );
    const { stdout } = await example("tools.ts", ["What was the policy?"], { PROCESS_ID: "ex-tools" });
    expect(stdout.trim()).toBe("Nothing about a policy yet.");
    expect(stack.provider.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["search_history", "get_message"]);
    expect(JSON.parse(stack.provider.requests[1]!.body.messages.at(-1).content).results[0]).toMatchObject({ role: "USER", excerpt: "What was the policy?" });
  }, 120_000);

  it("mcp.ts: starts the MCP server over stdio and searches a process", async () => {
    const memory = stack.memory;
    await memory.upsertProcess("ex-mcp", { projectId: "examples" });
    await memory.appendMessage("ex-mcp", { role: "USER", content: "The launch checklist lives in the wiki." });
    const { stdout } = await example("mcp.ts", ["ex-mcp", "launch", "checklist"]);
    expect(stdout).toContain("tools: search_history, get_context, get_message");
    expect(stdout).toContain("The launch checklist lives in the wiki.");
  }, 120_000);
});
