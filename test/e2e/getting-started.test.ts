/**
 * docs/getting-started.md followed word for word: its curl commands run against a local runner
 * started here (with the page's key), and its engine, installed against the client's tarball as
 * the page says, type-checks with tsc and runs with tsx against the same runner. The page's other
 * commands (clone, `npm ci && npm start`, `npm test`, the demo into the runner) are checked to be
 * there as written; the runner's start and the demo's `--url` are run in local-runner.test.ts.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPackedClient, REPO, TSC, type PackedClient } from "../support/packed-client.js";
import { startTestService } from "../support/service.js";

const run = promisify(execFile);
const PAGE = readFileSync(join(REPO, "docs/getting-started.md"), "utf8");
const LOCAL_KEY = "local-dev-key";

/** The fenced code blocks of the page, in order, with their language. */
const blocks = [...PAGE.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
const bash = blocks.filter((b) => b.lang === "bash").map((b) => b.code.trim());
const curlBlock = bash.find((b) => b.startsWith("curl "))!;
const engineBlock = blocks.find((b) => b.lang === "ts")!.code;

/** One command per line, a line ending in `\` continued on the next. */
const commandsOf = (block: string) => block.replace(/\\\n\s*/g, "").split("\n").filter((l) => l.trim() !== "");

let ctx: Awaited<ReturnType<typeof startTestService>>;
let pkg: PackedClient;

beforeAll(async () => {
  [ctx, pkg] = await Promise.all([startTestService({ env: { MEMORY_API_KEYS: `${LOCAL_KEY}=local` } }), installPackedClient()]);
}, 180_000);
afterAll(async () => {
  await ctx?.service.stop();
  await pkg?.remove();
});

/** The page's shell, pointed at the runner of this test instead of port 3000. */
const pageEnv = () => ({ ...process.env, MEMORY_URL: ctx.service.url, MEMORY_API_KEY: LOCAL_KEY });

describe("docs/getting-started.md", () => {
  it("gives the two commands, PORT, the inspector at /, the client's install, the engine's run and the demo into the runner", () => {
    expect(bash[0]).toMatch(/^git clone .+\nnpm ci && npm start$/);
    expect(bash).toContain("npm test");
    expect(PAGE).toContain("`PORT=3001 npm start`");
    expect(PAGE).toMatch(/\[http:\/\/127\.0\.0\.1:3000\/\]\(http:\/\/127\.0\.0\.1:3000\/\) is the inspector/);
    expect(PAGE).toContain("auto-pinned");
    expect(PAGE).toContain("for wiring and\ntests");
    expect(bash).toContain(`export MEMORY_URL=http://127.0.0.1:3000 MEMORY_API_KEY=${LOCAL_KEY}`);
    expect(bash.find((b) => b.includes("npm pack"))).toContain("npm install ../vancetope-memory/vancetope-memory-client-0.1.0.tgz");
    expect(bash).toContain(`MEMORY_URL=http://127.0.0.1:3000 MEMORY_API_KEY=${LOCAL_KEY} npx tsx engine.ts`);
    expect(bash).toContain("npm run demo -- --url http://127.0.0.1:3000 --window 4000");
    // The page's engine is about 30 lines, as it promises.
    expect(engineBlock.trim().split("\n").length).toBeLessThanOrEqual(35);
  });

  it("its curl commands create a process, run a first turn (auto-pinning the first user message) and store the answer", async () => {
    const commands = commandsOf(curlBlock);
    expect(commands).toHaveLength(4);
    const answers = [];
    for (const command of commands) {
      const { stdout } = await run("bash", ["-c", command], { env: pageEnv() });
      answers.push(JSON.parse(stdout));
    }
    const [health, put, turn, append] = answers;
    expect(health).toEqual({ ok: true });
    expect(put.process).toMatchObject({ processId: "trip-1", projectId: "demo" });
    expect(turn.compaction).toMatchObject({ mode: "NONE", compacted: false });
    expect(typeof turn.context.block).toBe("string");
    expect(turn.messages).toEqual([expect.objectContaining({ role: "USER", content: "Plan a trip to Lisbon", tags: ["STRENGTH:pinned"] })]);
    expect(append.message).toMatchObject({ role: "ASSISTANT", content: "Which month?", tags: [] });
  });

  it("a turn before its process exists is the 404 the page names", async () => {
    const first = commandsOf(curlBlock)[2]!.replaceAll("trip-1", "never-created");
    const { stdout } = await run("bash", ["-c", first], { env: pageEnv() });
    expect(JSON.parse(stdout).error.code).toBe("process.not_found");
  });

  it("its engine type-checks against the installed client and runs against the runner", async () => {
    await writeFile(join(pkg.dir, "engine.ts"), engineBlock);
    const tsconfig = {
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"], types: [], strict: true, skipLibCheck: false, noEmit: true },
      files: ["engine.ts"],
    };
    await writeFile(join(pkg.dir, "tsconfig.json"), JSON.stringify(tsconfig));
    const tsc = await pkg.exec(process.execPath, [TSC, "-p", "tsconfig.json"]).then(
      () => "",
      (e: { stdout: string }) => e.stdout,
    );
    expect(tsc).toBe("");

    const { stdout } = await pkg.exec(process.execPath, [join(REPO, "node_modules/tsx/dist/cli.mjs"), "engine.ts"], { MEMORY_URL: ctx.service.url, MEMORY_API_KEY: LOCAL_KEY });
    const lines = stdout.trim().split("\n");
    expect(lines.slice(0, 3)).toEqual(["NONE compacted=false: 2 messages sent", "NONE compacted=false: 4 messages sent", "NONE compacted=false: 6 messages sent"]);
    expect(lines[3]).toBe("pinned: Plan a trip to Lisbon in May.");
    const processId = /^inspect: \/\?process=(engine-\d+)$/.exec(lines[4] ?? "")?.[1];
    expect(processId).toBeDefined();
    const stored = await ctx.api("GET", `/v1/processes/${processId}/messages`, { key: LOCAL_KEY });
    expect(stored.body.items.map((m: { role: string }) => m.role)).toEqual(["USER", "ASSISTANT", "USER", "ASSISTANT", "USER", "ASSISTANT"]);
  }, 120_000);
});
