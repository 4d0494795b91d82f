/**
 * Packs `client/` with `npm pack` (which builds it) and installs the tarball into an empty project
 * in a temp folder, offline and with an empty npm cache: if installing wanted anything from a
 * registry, it would fail here.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const REPO = resolve(import.meta.dirname, "../..");
export const TSC = join(REPO, "node_modules/typescript/bin/tsc");

export interface PackedClient {
  dir: string;
  tarball: string;
  /** Runs a command in the project; never blocks the event loop (the service runs in this process). */
  exec(file: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

export async function installPackedClient(): Promise<PackedClient> {
  const dir = await mkdtemp(join(tmpdir(), "memory-client-consumer-"));
  const exec = (file: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    run(file, args, { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
  try {
    await run("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: join(REPO, "client") });
    const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"));
    if (!tarball) throw new Error("npm pack wrote no tarball");
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    await exec("npm", [
      "install",
      "--offline",
      "--cache",
      join(dir, ".npm-cache"),
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      `./${tarball}`,
    ]);
    return { dir, tarball: join(dir, tarball), exec, remove: () => rm(dir, { recursive: true, force: true }) };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
