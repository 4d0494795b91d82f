/**
 * The `vancetope-memory-mcp` server, driven over stdio by the MCP SDK's own client against the
 * local runner: the tools it lists, their answers, the processes it may read, and the errors an
 * MCP client sees.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import { createMemoryMcpServer } from "../../client/mcp.js";
import { countingClient } from "../support/counting-client.js";
import { getMessageTool, historySearchTool } from "../../client/tools.js";
import { REPO } from "../support/packed-client.js";
import { KEY_A, startTestService } from "../support/service.js";

const BIN = ["--import", "tsx", join(REPO, "client/bin/vancetope-memory-mcp.ts")];
const NOTE = "Deploys are frozen from the 14th to the 20th while the audit runs; ask Marta for exceptions.";
const SECRET = "The payroll export key is PX-7731; never share it.";
// The processes the server may read: a listed process that does not exist is the service's 404.
const ALLOWED = "mcp-1,nobody";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let mcp: Client;
let archivedId: string;

beforeAll(async () => {
  ctx = await startTestService();
  const memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
  await memory.upsertProcess("mcp-1", { projectId: "mcp" });
  await memory.appendMessage("mcp-1", { role: "USER", content: "Plan the release." });
  const from = new Date().toISOString();
  archivedId = (await memory.appendMessage("mcp-1", { role: "ASSISTANT", content: NOTE })).message.id;
  await memory.appendMessage("mcp-1", { role: "USER", content: "Which regions go first?" });
  const to = new Date().toISOString();
  await memory.compactRange("mcp-1", { from, to, topicLabel: "release freeze" });
  // Another process of the same tenant, which the server is not bound to.
  await memory.upsertProcess("mcp-other", { projectId: "mcp" });
  await memory.appendMessage("mcp-other", { role: "USER", content: SECRET });

  mcp = new Client({ name: "vancetope-memory-test", version: "1.0.0" });
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: BIN,
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "", MEMORY_URL: ctx.service.url, MEMORY_API_KEY: KEY_A, MEMORY_PROCESS_IDS: ALLOWED },
      stderr: "pipe",
    }),
  );
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await ctx?.service.stop();
});

type TextResult = { content: Array<{ type: string; text: string }>; isError?: boolean };
const call = async (name: string, args: Record<string, unknown>) => (await mcp.callTool({ name, arguments: args })) as TextResult;
const json = (r: TextResult) => JSON.parse(r.content[0]!.text);

describe("vancetope-memory-mcp over stdio", () => {
  it("identifies itself with the package's version and lists three tools with input schemas", async () => {
    const { version } = JSON.parse(await readFile(join(REPO, "client/package.json"), "utf8"));
    expect(mcp.getServerVersion()).toMatchObject({ name: "vancetope-memory", version });
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual(["search_history", "get_context", "get_message"]);
    for (const t of tools) {
      expect(t.inputSchema.required).toContain("processId");
      expect(t.annotations?.readOnlyHint).toBe(true);
    }
    // The same arguments and words as the model tools, plus the process.
    const search = tools[0]!.inputSchema;
    expect(Object.keys(search.properties ?? {}).sort()).toEqual(["limit", "processId", "query", "tag"]);
    expect(search.required!.sort()).toEqual(["processId", "query"]);
    for (const [key, rule] of Object.entries(historySearchTool.parameters.properties)) {
      expect((search.properties as Record<string, { description?: string }>)[key]?.description).toBe(rule.description);
    }
    expect(tools[2]!.inputSchema.required!.sort()).toEqual(["messageId", "processId"]);
    expect(tools[2]!.description).toContain(getMessageTool.description);
  });

  it("search_history finds an archived message and get_message reads it in full", async () => {
    const search = await call("search_history", { processId: "mcp-1", query: "deploy freeze audit" });
    expect(search.isError).toBeFalsy();
    expect(json(search).results[0]).toMatchObject({ messageId: archivedId, archived: true, role: "ASSISTANT" });
    const message = await call("get_message", { processId: "mcp-1", messageId: archivedId });
    expect(json(message)).toMatchObject({ messageId: archivedId, archived: true, content: NOTE });
  });

  it("get_context answers the memory block, with recall for a query", async () => {
    const plain = json(await call("get_context", { processId: "mcp-1" }));
    expect(plain.sections).toEqual(["Earlier Conversation (compacted)"]);
    expect(plain.block).toContain("## Earlier Conversation (compacted)");
    const recalled = json(await call("get_context", { processId: "mcp-1", query: "Marta exceptions" }));
    // The offline summary already carries the note, and recall skips what the replay shows
    // (docs/turns.md, "Recall"): the note is in the block once, not twice.
    expect(recalled.sections).toEqual(["Earlier Conversation (compacted)"]);
    expect(recalled.block).toContain("ask Marta for exceptions");
    expect(recalled.block.split("ask Marta for exceptions")).toHaveLength(2);
  });

  it("answers bad input and missing things with tool errors that name them", async () => {
    const missingMessage = await call("get_message", { processId: "mcp-1", messageId: "msg_nope" });
    expect(missingMessage.isError).toBe(true);
    expect(json(missingMessage).error).toMatch(/^message\.not_found: /);
    const missingProcess = await call("search_history", { processId: "nobody", query: "x" });
    expect(missingProcess.isError).toBe(true);
    expect(json(missingProcess).error).toMatch(/^process\.not_found: /);
    const invalid = await call("search_history", { processId: "mcp-1", query: "x", limit: 500 });
    expect(invalid.isError).toBe(true);
    expect(invalid.content[0]!.text).toMatch(/limit/);
    const noProcess = await call("get_context", {});
    expect(noProcess.isError).toBe(true);
    expect(noProcess.content[0]!.text).toMatch(/processId/);
  });
});

describe("the processes the server may read", () => {
  it("refuses any process outside its allow-list with process.not_allowed, whatever the tool", async () => {
    const calls = [
      call("search_history", { processId: "mcp-other", query: "payroll export key" }),
      call("get_context", { processId: "mcp-other", query: "payroll" }),
      call("get_message", { processId: "mcp-other", messageId: archivedId }),
    ];
    for (const result of await Promise.all(calls)) {
      expect(result.isError).toBe(true);
      expect(json(result).error).toBe("process.not_allowed: this server reads only the processes mcp-1, nobody; not 'mcp-other'");
      expect(result.content[0]!.text).not.toContain("PX-7731");
    }
    // The tools say which processes they read.
    const { tools } = await mcp.listTools();
    for (const t of tools) expect((t.inputSchema.properties as Record<string, { description?: string }>).processId?.description).toContain("mcp-1, nobody");
  });

  it("bound to one process, takes it as the default and refuses every other", async () => {
    const counted = countingClient(ctx.service.url, KEY_A);
    const server = createMemoryMcpServer({ client: counted.client, processIds: ["mcp-1"] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const bound = new Client({ name: "bound", version: "1.0.0" });
    await Promise.all([server.connect(serverSide), bound.connect(clientSide)]);
    try {
      const { tools } = await bound.listTools();
      for (const t of tools) expect(t.inputSchema.required ?? []).not.toContain("processId");
      const context = (await bound.callTool({ name: "get_context", arguments: {} })) as TextResult;
      expect(json(context).sections).toEqual(["Earlier Conversation (compacted)"]);
      const search = (await bound.callTool({ name: "search_history", arguments: { query: "deploy freeze audit" } })) as TextResult;
      expect(json(search).results[0]).toMatchObject({ messageId: archivedId });
      const requests = counted.requests.length;
      const other = (await bound.callTool({ name: "search_history", arguments: { processId: "mcp-other", query: "payroll" } })) as TextResult;
      expect(other.isError).toBe(true);
      expect(counted.requests).toHaveLength(requests); // refused without asking the service
      expect(json(other).error).toBe("process.not_allowed: this server reads only the process mcp-1; not 'mcp-other'");
    } finally {
      await bound.close();
    }
  });

  it("needs at least one process", () => {
    expect(() => createMemoryMcpServer({ client: createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A }), processIds: [] })).toThrow(/processIds/);
  });
});

describe("vancetope-memory-mcp configuration", () => {
  const run = promisify(execFile);
  const start = (env: Record<string, string>) =>
    run(process.execPath, BIN, { cwd: REPO, env: { PATH: process.env.PATH ?? "", ...env } }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );

  it("refuses to start without MEMORY_URL, MEMORY_API_KEY or MEMORY_PROCESS_IDS, saying which", async () => {
    const [noUrl, noKey, noProcess] = await Promise.all([
      start({ MEMORY_API_KEY: "k", MEMORY_PROCESS_IDS: "p" }),
      start({ MEMORY_URL: "http://127.0.0.1:9", MEMORY_PROCESS_IDS: "p" }),
      start({ MEMORY_URL: "http://127.0.0.1:9", MEMORY_API_KEY: "k", MEMORY_PROCESS_IDS: " , " }),
    ]);
    expect(noUrl).toMatchObject({ code: 1, stderr: expect.stringContaining("set MEMORY_URL") });
    expect(noKey).toMatchObject({ code: 1, stderr: expect.stringContaining("set MEMORY_API_KEY") });
    expect(noProcess).toMatchObject({ code: 1, stderr: expect.stringContaining("set MEMORY_PROCESS_IDS") });
  });

  it("reports a wrong API key as a tool error instead of dying", async () => {
    const client = new Client({ name: "t", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: BIN,
        cwd: REPO,
        env: { PATH: process.env.PATH ?? "", MEMORY_URL: ctx.service.url, MEMORY_API_KEY: "wrong", MEMORY_PROCESS_IDS: "mcp-1" },
        stderr: "pipe",
      }),
    );
    try {
      const result = (await client.callTool({ name: "get_context", arguments: { processId: "mcp-1" } })) as TextResult;
      expect(result.isError).toBe(true);
      expect(JSON.parse(result.content[0]!.text).error).toMatch(/^auth\.invalid_key: /);
    } finally {
      await client.close();
    }
  });
});
