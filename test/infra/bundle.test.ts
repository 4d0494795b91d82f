/**
 * Every Lambda bundled exactly as `sst deploy` bundles it (stacks/bundling.ts, with SST's own
 * esbuild; stacks.test.ts checks the result is byte-identical to SST's upload), then loaded in a
 * fresh Node process from a directory with no node_modules: it must load on its own, export
 * `handler`, and the functions that never summarize must not carry the OpenAI/Anthropic SDKs.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ESM_BANNER, productionBuildOptions } from "../../stacks/bundling.js";
import { HANDLERS, type HandlerName } from "../../stacks/handlers.js";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
/** SST bundles with the esbuild it depends on, not the project's: use that one. */
const esbuild = createRequire(require.resolve("sst/package.json"))("esbuild") as typeof import("esbuild");

const LLM_SDKS = [/node_modules\/openai\//, /node_modules\/@anthropic-ai\//];
const names = Object.keys(HANDLERS) as HandlerName[];
const out = mkdtempSync(path.join(tmpdir(), "vtm-bundles-"));
const built = {} as Record<HandlerName, { file: string; metafile: Metafile; bytes: number; gzipBytes: number }>;

beforeAll(async () => {
  await Promise.all(
    names.map(async (name) => {
      const file = path.join(out, name, "index.mjs");
      const result = await esbuild.build(productionBuildOptions(HANDLERS[name].entry, file));
      const text = readFileSync(file);
      built[name] = { file, metafile: result.metafile!, bytes: statSync(file).size, gzipBytes: gzipSync(text).length };
    }),
  );
}, 120_000);

afterAll(() => {
  const rows = names.filter((n) => built[n]).map((n) => ({
    function: n,
    entry: HANDLERS[n].entry,
    summarizes: HANDLERS[n].summarizes,
    kB: Math.round(built[n].bytes / 1024),
    gzipKB: Math.round(built[n].gzipBytes / 1024),
  }));
  console.log("Lambda bundle sizes (minified ESM, AWS SDK v3 bundled):");
  console.table(rows);
  mkdirSync("test-artifacts", { recursive: true });
  writeFileSync("test-artifacts/bundle-sizes.json", `${JSON.stringify(rows, null, 2)}\n`);
});

const RESULT = "@@vtm-result@@ ";

/** Imports the bundle in a new Node process, optionally calls its handler, prints the outcome. */
async function loadInFreshNode(file: string, event?: unknown): Promise<{ exports: string[]; handlerType: string; result?: unknown }> {
  const script = `
    const m = await import(process.argv[1]);
    const out = { exports: Object.keys(m).sort(), handlerType: typeof m.handler };
    if (process.argv[2]) out.result = await m.handler(JSON.parse(process.argv[2]), {});
    console.log(${JSON.stringify(RESULT)} + JSON.stringify(out));
  `;
  const args = ["--input-type=module", "-e", script, pathToFileURL(file).href, ...(event ? [JSON.stringify(event)] : [])];
  const { stdout } = await run(process.execPath, args, {
    cwd: path.dirname(file),
    // No credentials and no endpoints: loading must not need AWS; a network call would fail.
    env: { PATH: process.env.PATH ?? "", AWS_REGION: "eu-west-1", TABLE_NAME: "t", EVENT_BUS_NAME: "b", HOME: out },
    timeout: 30_000,
  });
  // The handler's own logs share stdout; the outcome is the marked line.
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT));
  if (!line) throw new Error(`no result from ${file}:\n${stdout}`);
  return JSON.parse(line.slice(RESULT.length));
}

const usesLlmSdk = (metafile: Metafile) =>
  Object.keys(metafile.inputs).filter((input) => LLM_SDKS.some((sdk) => sdk.test(input)));

describe.each(names)("%s bundle", (name) => {
  it("loads in a fresh Node process with no node_modules and exports handler", async () => {
    const loaded = await loadInFreshNode(built[name].file);
    expect(loaded.handlerType).toBe("function");
    expect(loaded.exports).toContain("handler");
  }, 30_000);

  it("starts with the createRequire banner (CommonJS dependencies inside ESM)", () => {
    const text = readFileSync(built[name].file, "utf8");
    expect(text.startsWith(ESM_BANNER)).toBe(true);
    expect(text.startsWith("import { createRequire as topLevelCreateRequire } from 'module';\nconst require = topLevelCreateRequire(import.meta.url);")).toBe(true);
  });

  it("bundles the AWS SDK it uses instead of relying on the runtime's copy", () => {
    const inputs = Object.keys(built[name].metafile.inputs);
    expect(inputs.some((i) => i.includes("node_modules/@aws-sdk/client-dynamodb/"))).toBe(true);
    const imports = Object.values(built[name].metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
    // Whatever is not bundled must be a Node built-in: nothing else exists next to the bundle.
    expect(imports.filter((p) => !p.startsWith("node:") && !builtinModules.includes(p))).toEqual([]);
  });

  if (HANDLERS[name].summarizes) {
    it("contains the OpenAI and Anthropic SDKs and the SSM client (it summarizes)", () => {
      const sdks = usesLlmSdk(built[name].metafile);
      expect(sdks.some((i) => i.includes("node_modules/openai/"))).toBe(true);
      expect(sdks.some((i) => i.includes("node_modules/@anthropic-ai/"))).toBe(true);
      expect(Object.keys(built[name].metafile.inputs).some((i) => i.includes("node_modules/@aws-sdk/client-ssm/"))).toBe(true);
    });
  } else {
    it("contains no OpenAI or Anthropic SDK code and no SSM client (it never summarizes)", () => {
      expect(usesLlmSdk(built[name].metafile)).toEqual([]);
      expect(Object.keys(built[name].metafile.inputs).some((i) => i.includes("@aws-sdk/client-ssm"))).toBe(false);
      const text = readFileSync(built[name].file, "utf8");
      expect(text).not.toMatch(/api\.openai\.com|api\.anthropic\.com/);
    });
  }
});

describe("deployed bundles answer without AWS", () => {
  it("api: GET /health returns 200 { ok: true } (no authorizer, no table read)", async () => {
    const event = {
      version: "2.0",
      routeKey: "GET /health",
      rawPath: "/health",
      rawQueryString: "",
      headers: { host: "abc.execute-api.eu-west-1.amazonaws.com" },
      requestContext: {
        accountId: "123456789012",
        apiId: "abc",
        domainName: "abc.execute-api.eu-west-1.amazonaws.com",
        http: { method: "GET", path: "/health", protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "test" },
        requestId: "r1",
        routeKey: "GET /health",
        stage: "$default",
        time: "01/Jan/2026:00:00:00 +0000",
        timeEpoch: 1767225600000,
      },
      isBase64Encoded: false,
    };
    const { result } = await loadInFreshNode(built.api.file, event);
    const response = result as { statusCode: number; body: string };
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ ok: true });
  }, 30_000);

  it("api: a /v1 request without an authorizer tenant is 401 in the API's error format", async () => {
    const event = {
      version: "2.0",
      routeKey: "GET /v1/processes",
      rawPath: "/v1/processes",
      rawQueryString: "",
      headers: { host: "abc.execute-api.eu-west-1.amazonaws.com", authorization: "Bearer vtm_unknown" },
      requestContext: {
        accountId: "123456789012",
        apiId: "abc",
        authorizer: { lambda: {} },
        domainName: "abc.execute-api.eu-west-1.amazonaws.com",
        http: { method: "GET", path: "/v1/processes", protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "test" },
        requestId: "r2",
        routeKey: "GET /v1/processes",
        stage: "$default",
        time: "01/Jan/2026:00:00:00 +0000",
        timeEpoch: 1767225600000,
      },
      isBase64Encoded: false,
    };
    const { result } = await loadInFreshNode(built.api.file, event);
    const response = result as { statusCode: number; body: string };
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body).error.code).toMatch(/^auth\./);
  }, 30_000);

  it("authorizer: a request that is not a bearer token gets no tenant (and reads nothing)", async () => {
    const { result } = await loadInFreshNode(built.authorizer.file, {
      type: "REQUEST",
      identitySource: ["Basic abc"],
      headers: { authorization: "Basic abc" },
      requestContext: { requestId: "r3" },
    });
    expect(result).toEqual({ isAuthorized: true });
  }, 30_000);
});
