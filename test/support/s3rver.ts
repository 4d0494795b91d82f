/**
 * Starts s3rver, the S3-compatible server of the test run (test/global-setup.ts), on 127.0.0.1.
 * Kept apart from test/support/s3.ts, which reads what the setup provides through vitest's inject.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

/** The key pair s3rver accepts (its built-in account): alphanumeric, as the signer needs. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

/** Runs in the child: starts s3rver on a random port and prints it. */
const CHILD = `
  const S3rver = require(process.argv[1]);
  new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: process.argv[2], vhostBuckets: false })
    .run()
    .then(({ port }) => console.log(JSON.stringify({ port })), (e) => { console.error(e); process.exit(1); });
`;

/**
 * Starts s3rver on a random port of 127.0.0.1, its data in a temporary folder removed on stop. It
 * runs in a child Node with OpenSSL's legacy provider: s3rver seals ListObjectsV2 continuation
 * tokens with DES, which Node's OpenSSL 3 refuses otherwise (a paged listing would be a 500).
 */
export async function startLocalS3(): Promise<LocalS3> {
  const entry = createRequire(import.meta.url).resolve("s3rver");
  const directory = await mkdtemp(path.join(tmpdir(), "vtm-s3rver-"));
  const child = spawn(process.execPath, ["--openssl-legacy-provider", "-e", CHILD, entry, directory], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += String(d)));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once("exit", (code) => reject(new Error(`s3rver exited (${code}) before answering: ${stderr}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
