/**
 * The client as engines get it: `npm pack` of `client/`, installed from the tarball into an empty
 * project offline, then a consumer file type-checked against the shipped declarations and run
 * against the local runner; the MCP server started as the docs configure it; the same client
 * installed from a `file:` path; the licence and the manifest a registry would get.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import { installPackedClient, REPO, TSC, type PackedClient } from "../support/packed-client.js";
import { KEY_A, startTestService } from "../support/service.js";

const execFileP = promisify(execFile);
let ctx: Awaited<ReturnType<typeof startTestService>>;
let pkg: PackedClient;

beforeAll(async () => {
  [ctx, pkg] = await Promise.all([startTestService(), installPackedClient()]);
}, 180_000);
afterAll(async () => {
  await ctx?.service.stop();
  await pkg?.remove();
});

const CONSUMER = `
import { createMemoryClient, MemoryApiError, toOpenAIMessages, type Turn } from "@vancetope/memory-client";
import { createMemoryToolHandler, memoryTools } from "@vancetope/memory-client/tools";

declare const process: { env: Record<string, string | undefined> };

const memory = createMemoryClient({ baseUrl: process.env.MEMORY_URL!, apiKey: process.env.MEMORY_API_KEY! });
await memory.upsertProcess("packed-1", { projectId: "packed" });
const turn: Turn = await memory.beginTurn("packed-1", {
  message: { role: "USER", content: "Hello from an installed package" },
  model: { name: "tiny", contextWindow: 4000 },
});
await memory.appendMessage("packed-1", { role: "ASSISTANT", content: "Hello back" });
const missing = await memory.getProcess("nope").catch((e: unknown) => e);
const search = await createMemoryToolHandler({ client: memory, processId: "packed-1" })("search_history", '{"query":"installed package"}');
console.log(JSON.stringify({
  prompt: toOpenAIMessages(turn, { system: "Be brief." }),
  active: (await memory.listMessages("packed-1", { view: "active" })).items.map((m) => m.content),
  missing: missing instanceof MemoryApiError ? missing.code : String(missing),
  tools: memoryTools.map((t) => t.openai.function.name),
  found: JSON.parse(search.content).results.map((r: { excerpt: string }) => r.excerpt),
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022", "DOM"],
    types: [],
    strict: true,
    // Check the package's own declarations too, not only the consumer.
    skipLibCheck: false,
    outDir: "out",
  },
  files: ["consumer.ts", "misuse.ts"],
};

describe("@vancetope/memory-client from its tarball", () => {
  it("ships built ESM with declarations, a README and no runtime dependencies", async () => {
    const { stdout } = await pkg.exec("tar", ["-tzf", pkg.tarball]);
    const files = stdout.split("\n").filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(["package/package.json", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts"]));
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    const manifest = JSON.parse(await readFile(join(pkg.dir, "node_modules/@vancetope/memory-client/package.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "@vancetope/memory-client", type: "module", version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    // Every entry point and the binary point at files that were packed.
    const targets = Object.values(manifest.exports as Record<string, string | Record<string, string>>).flatMap((t) => (typeof t === "string" ? [t] : Object.values(t)));
    expect(Object.keys(manifest.exports)).toEqual([".", "./tools", "./mcp", "./ai-sdk", "./openai-agents", "./package.json"]);
    for (const target of [...targets, manifest.bin["vancetope-memory-mcp"]]) expect(files).toContain(`package/${target.replace(/^\.\//, "")}`);
    for (const name of Object.keys(manifest.peerDependencies ?? {})) {
      expect(manifest.peerDependenciesMeta?.[name]?.optional, `${name} is an optional peer`).toBe(true);
    }
    // Nothing else was installed: the optional peers stay out of an engine that does not use them.
    expect(await readdir(join(pkg.dir, "node_modules"))).toEqual(expect.not.arrayContaining(["ai", "@openai", "@modelcontextprotocol"]));
    expect(await readdir(join(pkg.dir, "node_modules/@vancetope"))).toEqual(["memory-client"]);
  });

  it("installs the vancetope-memory-mcp binary, which names its missing optional peer", async () => {
    const failed = await pkg
      .exec(join(pkg.dir, "node_modules/.bin/vancetope-memory-mcp"), [], { MEMORY_URL: ctx.service.url, MEMORY_API_KEY: KEY_A, MEMORY_PROCESS_IDS: "p" })
      .then(() => ({ code: 0, stderr: "" }), (e: { code: number; stderr: string }) => e);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("needs @modelcontextprotocol/sdk 1.x and zod");
  });

  it("type-checks a consumer file against the shipped declarations and runs it against the local runner", async () => {
    await writeFile(join(pkg.dir, "consumer.ts"), CONSUMER);
    // A second file misuses the types: the same tsc run must report it, and only it.
    await writeFile(join(pkg.dir, "misuse.ts"), `import { createMemoryClient } from "@vancetope/memory-client";\ncreateMemoryClient({ baseUrl: 1, apiKey: "k" });\n`);
    await writeFile(join(pkg.dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
    const tsc = await pkg.exec(process.execPath, [TSC, "-p", "tsconfig.json"]).then(
      () => ({ stdout: "" }),
      (e: { stdout: string }) => e,
    );
    expect(tsc.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^misuse\.ts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/)]);

    const { stdout } = await pkg.exec(process.execPath, ["out/consumer.js"], { MEMORY_URL: ctx.service.url, MEMORY_API_KEY: KEY_A });
    const out = JSON.parse(stdout);
    expect(out.prompt).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello from an installed package" },
    ]);
    expect(out.active).toEqual(["Hello from an installed package", "Hello back"]);
    expect(out.missing).toBe("process.not_found");
    expect(out.tools).toEqual(["search_history", "get_message"]);
    expect(out.found).toEqual(["Hello from an installed package"]);
  }, 120_000);
});

describe("the licence and the registry's manifest", () => {
  it("is Apache-2.0, with the licence file packed, public with provenance once published", async () => {
    const manifest = JSON.parse(await readFile(join(pkg.dir, "node_modules/@vancetope/memory-client/package.json"), "utf8"));
    expect(manifest.license).toBe("Apache-2.0");
    expect(manifest.files).toContain("LICENSE");
    expect(manifest.publishConfig).toEqual({ access: "public", provenance: true });
    expect(manifest.bin).toEqual({ "vancetope-memory-mcp": "./dist/bin/vancetope-memory-mcp.js" });
    const licence = await readFile(join(pkg.dir, "node_modules/@vancetope/memory-client/LICENSE"), "utf8");
    expect(licence).toContain("Apache License\n                           Version 2.0, January 2004");
    expect(licence).toContain("Copyright 2026 Vancetope Memory contributors");
    expect(await readFile(join(REPO, "LICENSE"), "utf8")).toBe(licence);
    const root = JSON.parse(await readFile(join(REPO, "package.json"), "utf8"));
    expect(root.license).toBe("Apache-2.0");
    // Provenance ties the package to the repository its workflow runs in: the root's, folder client/.
    expect(manifest.repository).toEqual({ ...root.repository, directory: "client" });
    expect(root.repository.url).toMatch(/^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
  });
});

describe("the MCP server as the docs configure it (node, by path, its peers installed next to it)", () => {
  let mcp: Client | undefined;
  afterAll(async () => mcp?.close());

  it("starts from the installed tarball and lists its tools over stdio", async () => {
    // The docs' install of the two peers; from the npm cache when it has them.
    await pkg.exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "@modelcontextprotocol/sdk@1", "zod"]);
    const config = /```json\n([\s\S]*?)\n```/.exec(await readFile(join(REPO, "docs/integrations.md"), "utf8").then((t) => t.slice(t.indexOf("## MCP"))))![1]!;
    const server = JSON.parse(config).mcpServers["vancetope-memory"];
    expect(server.command).toBe("node");
    const bin = server.args[0].replace("/path/to/my-engine", pkg.dir);
    await memoryFor(ctx.service.url).upsertProcess("packed-mcp", { projectId: "packed" });
    mcp = new Client({ name: "packed-test", version: "1.0.0" });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [bin],
        cwd: pkg.dir,
        env: { PATH: process.env.PATH ?? "", ...server.env, MEMORY_URL: ctx.service.url, MEMORY_API_KEY: KEY_A, MEMORY_PROCESS_IDS: "packed-mcp" },
        stderr: "pipe",
      }),
    );
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_context", "get_message", "search_history"]);
    const context = await mcp.callTool({ name: "get_context", arguments: {} });
    expect(context.isError).toBeFalsy();
  }, 180_000);
});

describe("@vancetope/memory-client from a file: path", () => {
  it("installs as a link to client/ into an empty project, offline, and calls the service from there", async () => {
    const dir = await mkdtemp(join(tmpdir(), "memory-client-file-"));
    try {
      await writeFile(join(dir, "package.json"), JSON.stringify({ name: "file-consumer", private: true, type: "module" }));
      await execFileP("npm", ["install", "--offline", "--cache", join(dir, ".npm-cache"), "--no-audit", "--no-fund", "--ignore-scripts", `file:${join(REPO, "client")}`], { cwd: dir });
      const script = `import { createMemoryClient } from "@vancetope/memory-client";
const memory = createMemoryClient();
await memory.upsertProcess("file-1", { projectId: "file" });
const { message } = await memory.appendMessage("file-1", { role: "user", content: "from a file: install" });
console.log(JSON.stringify({ health: await memory.health(), role: message.role }));`;
      await writeFile(join(dir, "use.mjs"), script);
      const { stdout } = await execFileP(process.execPath, ["use.mjs"], { cwd: dir, env: { ...process.env, MEMORY_URL: ctx.service.url, MEMORY_API_KEY: KEY_A } });
      expect(JSON.parse(stdout)).toEqual({ health: { ok: true }, role: "USER" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

const memoryFor = (baseUrl: string) => createMemoryClient({ baseUrl, apiKey: KEY_A });
