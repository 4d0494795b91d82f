/**
 * `npm start` (local/main.ts) and `npm run demo` (scripts/demo.ts) as a newcomer runs them, in
 * child processes: a busy port ends the start before anything is started, with a sentence naming
 * the port and how to pick another; a failure after DynamoDB Local started stops it again; and the
 * demo plays its session into a running service, where it stays for the inspector.
 */
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import { REPO } from "../support/packed-client.js";
import { KEY_A, startTestService } from "../support/service.js";

interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry of the repository with tsx; resolves with its exit code and output. */
function runEntry(entry: string, args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", join(REPO, entry), ...args], { cwd: REPO, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Pids of live processes whose environment carries `marker` (children inherit it: the java of DynamoDB Local too). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").includes(marker)) pids.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

describe("npm start", () => {
  let busy: { server: Server; port: number };
  beforeAll(async () => {
    busy = await listen();
  });
  afterAll(() => busy?.server.close());

  it("on a busy port exits 1 with the port and how to pick another, before starting DynamoDB Local", async () => {
    const marker = `VTM_RUNNER_TEST=${randomUUID()}`;
    const [name, value] = marker.split("=") as [string, string];
    const exit = await runEntry("local/main.ts", [], { PORT: String(busy.port), [name]: value });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`Cannot start: port ${busy.port} on 127.0.0.1 is in use`);
    expect(exit.stderr).toContain(`PORT=${busy.port + 1} npm start`);
    // A sentence, not a stack trace.
    expect(exit.stderr).not.toMatch(/\n\s+at /);
    expect(exit.stdout).not.toContain("is running at");
    expect(processesWith(marker)).toEqual([]);
  }, 120_000);

  it("stops DynamoDB Local when the start fails after it began (an invalid table name)", async () => {
    const marker = `VTM_RUNNER_TEST=${randomUUID()}`;
    const [name, value] = marker.split("=") as [string, string];
    const free = await listen();
    await new Promise((r) => free.server.close(r));
    const exit = await runEntry("local/main.ts", [], { PORT: String(free.port), TABLE_NAME: "x", [name]: value });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain("Cannot start the local runner");
    // DynamoDB Local itself refused the name, so its java process was running, and it is gone again.
    expect(exit.stderr).toContain("ValidationException: Invalid table/index name");
    expect(processesWith(marker)).toEqual([]);
  }, 120_000);
});

describe("npm start's banner", () => {
  it("names the inspector and what the offline summarizer is for, and Ctrl-C leaves nothing running", async () => {
    const marker = `VTM_RUNNER_TEST=${randomUUID()}`;
    const [name, value] = marker.split("=") as [string, string];
    const free = await listen();
    await new Promise((r) => free.server.close(r));
    const child = spawn(process.execPath, ["--import", "tsx", join(REPO, "local/main.ts")], {
      cwd: REPO,
      env: { ...process.env, PORT: String(free.port), SUMMARIZER: "offline", [name]: value },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // The signal too: a process that ends by a signal (code null) says which one.
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    let out = "";
    // The banner ends with its "Try:" line; wait for it (or for the process to end).
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("  Try:")) resolve();
      });
      void exited.then(() => resolve());
    });
    const url = `http://127.0.0.1:${free.port}`;
    expect(out).toContain(`Vancetope Memory is running at ${url}`);
    expect(out).toContain(`  Inspector:  ${url}/`);
    expect(out).toContain("  Summarizer: offline (offline-extractive-v1)");
    expect(out.replace(/\s+/g, " ")).toContain("for wiring and tests, not real summaries: set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL (vLLM, Ollama) for an LLM's summaries (docs/summarizers.md)");
    expect(processesWith(marker).length).toBeGreaterThan(1);
    child.kill("SIGINT");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(processesWith(marker)).toEqual([]);
  }, 120_000);
});

describe("npm run demo -- --url", () => {
  let ctx: Awaited<ReturnType<typeof startTestService>>;
  beforeAll(async () => {
    ctx = await startTestService();
  });
  afterAll(async () => ctx?.service.stop());

  it("plays the session into the running service, keeps it there and names its inspector page", async () => {
    const exit = await runEntry("scripts/demo.ts", ["--url", ctx.service.url, "--turns", "12", "--window", "1000", "--generated"], { MEMORY_API_KEY: KEY_A, MEMORY_URL: "" });
    expect(exit.stderr).toBe("");
    expect(exit.code).toBe(0);
    expect(exit.stdout).toContain(`Vancetope Memory demo at ${ctx.service.url}`);
    const link = new RegExp(`open ${ctx.service.url.replace(/[.]/g, "\\.")}/\\?process=(demo-[a-z0-9]+) in the inspector`).exec(exit.stdout);
    expect(link).not.toBeNull();
    const memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
    const messages = await memory.listMessages(link![1]!, { limit: 200 });
    expect(messages.items.length).toBeGreaterThanOrEqual(12);
    expect((await memory.getProcess(link![1]!)).projectId).toBe("demo");
  }, 180_000);

  it("says so when no service answers at --url, and exits 1", async () => {
    const free = await listen();
    await new Promise((r) => free.server.close(r));
    const exit = await runEntry("scripts/demo.ts", ["--url", `http://127.0.0.1:${free.port}`, "--turns", "2"], { MEMORY_API_KEY: KEY_A });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`No service answers at http://127.0.0.1:${free.port}`);
  }, 120_000);
});
