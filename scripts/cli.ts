/**
 * What the operator CLIs (`npm run keys`, `npm run budget`) share: the stage's table from the
 * environment, the `--tenant` argument, usage errors as exit code 2, and running as a script.
 */
import { pathToFileURL } from "node:url";
import { createDocumentClient } from "../core/adapters/dynamodb/client.js";
import { Id } from "../core/domain/fields.js";
import { SERVICE_NAME } from "../core/domain/service.js";

export interface CliOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** The stage's table (TABLE_NAME; the service's name on DynamoDB Local) and a client for it. */
export function tableFrom(env: Record<string, string | undefined>) {
  const tableName = env.TABLE_NAME ?? (env.DYNAMODB_ENDPOINT ? SERVICE_NAME : undefined);
  if (!tableName) throw new UsageError("TABLE_NAME is not set (use the stage's TableName output)");
  return { client: createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT }), tableName };
}

export function tenantArg(value: string | undefined): string {
  if (!value) throw new UsageError("--tenant is required");
  const parsed = Id.safeParse(value);
  if (!parsed.success) throw new UsageError(`--tenant '${value}': ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** Runs a command; a usage mistake (ours or parseArgs') prints it with `usage` and exits 2. */
export async function withUsage(usage: string, io: CliOutput, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.err(`${(e as Error).message}\n${usage}`);
      return 2;
    }
    throw e;
  }
}

/** Runs `cli` with the process's arguments when `moduleUrl` is the script node was started with. */
export async function runAsScript(
  moduleUrl: string,
  cli: (argv: string[], io: CliOutput & { env: NodeJS.ProcessEnv }) => Promise<number>,
): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  process.exitCode = await cli(process.argv.slice(2), {
    env: process.env,
    out: (l) => process.stdout.write(`${l}\n`),
    err: (l) => process.stderr.write(`${l}\n`),
  });
}
