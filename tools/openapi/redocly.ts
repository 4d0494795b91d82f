/**
 * Runs Redocly's CLI (`@redocly/cli`, a devDependency) from its package, offline: the lint in
 * `npm test` (test/infra/openapi-lint.test.ts) and the local runner's API reference page
 * (`redocly build-docs`, local/inspector-routes.ts) both go through here.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The CLI's entry file, found on first use (a production install without devDependencies has none). */
const cliEntry = () => path.join(path.dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin", "cli.js");

/**
 * Runs `redocly <args>` with the running Node, without telemetry or an update check (nothing
 * leaves the machine). Resolves with its output whatever its exit code.
 */
export async function redocly(args: string[], options: { cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
  try {
    const { stdout, stderr } = await run(process.execPath, [cliEntry(), ...args], { env, cwd: options.cwd, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const failed = e as { code?: unknown; stdout?: string; stderr?: string; message: string };
    if (typeof failed.code !== "number") throw e;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? failed.message };
  }
}
