/**
 * What the operator CLIs (`npm run keys`, `npm run budget`, `npm run processes`) share: the
 * command line, the stage's table from the environment, the `--tenant` argument, usage errors as
 * exit code 2, and running as a script.
 */
import { pathToFileURL } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { createDocumentClient } from "../core/adapters/dynamodb/client.js";
import { Id } from "../core/domain/fields.js";
import { SERVICE_NAME } from "../core/domain/service.js";

export interface CliOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** What a CLI over a stage's table is given: its environment, and where its lines go. */
export interface TableCliIo extends CliOutput {
  env: Record<string, string | undefined>;
}

/** The usage text's last lines: where the table comes from. */
export const TABLE_ENVIRONMENT = `environment: TABLE_NAME (the stage's table, see the TableName stack output),
             DYNAMODB_ENDPOINT (optional, DynamoDB Local), AWS_REGION / AWS_PROFILE as usual`;

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

const HELP_OPTION = { help: { type: "boolean", short: "h", default: false } } as const;
type Options = NonNullable<ParseArgsConfig["options"]>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & typeof HELP_OPTION }>>["values"];

/**
 * Runs a command line: one command (the one positional) and `options`; the usage is printed
 * instead when asked for with --help (exit code 0) or when no command is given (2), and with
 * a usage mistake (2, see `withUsage`).
 */
export function runCommandLine<const O extends Options>(
  argv: string[],
  usage: string,
  io: CliOutput,
  options: O,
  run: (command: string, values: Values<O>) => Promise<number>,
): Promise<number> {
  return withUsage(usage, io, async () => {
    const config = { args: argv, allowPositionals: true as const, options: { ...options, ...HELP_OPTION } };
    const { positionals, values } = parseArgs(config);
    const command = positionals[0];
    const help = (values as { help?: boolean }).help === true;
    if (help || !command) {
      io.out(usage);
      return help ? 0 : 2;
    }
    if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
    return run(command, values as Values<O>);
  });
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
