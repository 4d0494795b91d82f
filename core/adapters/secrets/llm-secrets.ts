/**
 * Loads the LLM API keys from SSM Parameter Store (SecureString) into the environment, once per
 * container, before the summarizer is built. The template only carries the parameter NAMES
 * (`OPENAI_API_KEY_PARAM`, `ANTHROPIC_API_KEY_PARAM`), never a key.
 *
 * @example
 * await loadLlmSecrets(); // then process.env.OPENAI_API_KEY is set if its parameter exists
 */
import { GetParameterCommand, ParameterNotFound, SSMClient } from "@aws-sdk/client-ssm";

/** `<name of the env var holding the parameter name>` -> `<env var the summarizer reads>`. */
export const LLM_SECRET_PARAMS = {
  OPENAI_API_KEY_PARAM: "OPENAI_API_KEY",
  ANTHROPIC_API_KEY_PARAM: "ANTHROPIC_API_KEY",
} as const;

type Env = Record<string, string | undefined>;

export interface ParameterReader {
  send(command: GetParameterCommand): Promise<{ Parameter?: { Value?: string } }>;
}

export interface LoadSecretsOptions {
  /** Defaults to an SSM client for the function's region, created on first use. */
  client?: ParameterReader;
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

const loaded = new WeakMap<Env, Promise<void>>();
let defaultClient: SSMClient | undefined;

/**
 * Sets `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` in `env` from the parameters named by their `_PARAM`
 * variables. A no-op when no `_PARAM` is set, and for a key already present in `env`. A missing
 * parameter is skipped with a warning (that provider is then simply not configured); any other
 * failure rejects and is retried on the next call, so a throttled cold start does not stick.
 */
export function loadLlmSecrets(env: Env = process.env, options: LoadSecretsOptions = {}): Promise<void> {
  let pending = loaded.get(env);
  if (!pending) {
    pending = load(env, options);
    loaded.set(env, pending);
    pending.catch(() => loaded.delete(env));
  }
  return pending;
}

async function load(env: Env, options: LoadSecretsOptions): Promise<void> {
  const wanted = Object.entries(LLM_SECRET_PARAMS).filter(([param, target]) => env[param] && !env[target]);
  if (wanted.length === 0) return;
  const client = options.client ?? (defaultClient ??= new SSMClient({}));
  const warn =
    options.warn ??
    ((message, fields) => console.warn(JSON.stringify({ level: "WARN", service: "vancetope-memory", message, ...fields })));
  const values = await Promise.all(
    wanted.map(async ([param, target]) => {
      const name = env[param]!;
      try {
        const out = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
        return [target, out.Parameter?.Value] as const;
      } catch (e) {
        if (e instanceof ParameterNotFound || (e as { name?: string }).name === "ParameterNotFound") {
          warn("LLM key parameter not found; that provider stays unconfigured", { parameter: name });
          return [target, undefined] as const;
        }
        throw e;
      }
    }),
  );
  // Set only after every read succeeded, so a partial failure leaves the environment unchanged.
  for (const [target, value] of values) if (value) env[target] = value;
}
