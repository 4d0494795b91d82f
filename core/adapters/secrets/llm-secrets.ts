/**
 * Loads the LLM API keys from SSM Parameter Store (SecureString) into the environment, once per
 * container, before the summarizer is built, through Powertools Parameters (decryption, the SDK
 * client, the error types). The template only carries the parameter NAMES (each remote provider's
 * `keyParamEnv`, e.g. `OPENAI_API_KEY_PARAM`), never a key (docs/deploy.md).
 *
 * @example
 * await loadLlmSecrets(env, { warn: log.warn }); // then env.OPENAI_API_KEY is set if its parameter exists
 */
import { ParameterNotFoundError } from "@aws-lambda-powertools/parameters/errors";
import { SSMProvider } from "@aws-lambda-powertools/parameters/ssm";
import type { SSMClient } from "@aws-sdk/client-ssm";
import { REMOTE_PROVIDERS } from "../llm/provider-descriptors.js";

/**
 * `<name of the env var holding the parameter name>` -> `<env var the summarizer reads>`, one
 * pair per remote provider (core/adapters/llm/provider-descriptors.ts).
 */
export const LLM_SECRET_PARAMS: Readonly<Record<string, string>> = Object.fromEntries(
  REMOTE_PROVIDERS.map(([, r]) => [r.keyParamEnv, r.keyEnv]),
);

type Env = Record<string, string | undefined>;

export interface LoadSecretsOptions {
  /** Defaults to an SSM client for the function's region, created on first use. */
  client?: SSMClient;
  /** Where a missing parameter is reported: the service's logger (core/composition/summarizing-deps.ts). */
  warn: (message: string, fields: Record<string, unknown>) => void;
}

const loaded = new WeakMap<Env, Promise<void>>();
let defaultProvider: SSMProvider | undefined;

/**
 * Sets each provider's key variable (`OPENAI_API_KEY`, …) in `env` from the parameter its `_PARAM`
 * variable names. A no-op when no `_PARAM` is set, and for a key already present in `env`. A missing
 * parameter is skipped with a warning (that provider is then simply not configured); any other
 * failure rejects and is retried on the next call, so a throttled cold start does not stick.
 */
export function loadLlmSecrets(env: Env, options: LoadSecretsOptions): Promise<void> {
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
  const provider = options.client ? new SSMProvider({ awsSdkV3Client: options.client }) : (defaultProvider ??= new SSMProvider());
  const { warn } = options;
  const values = await Promise.all(
    wanted.map(async ([param, target]) => {
      const name = env[param]!;
      try {
        // Read once per container (loadLlmSecrets memoizes), so the provider's cache is not used.
        return [target, await provider.get(name, { decrypt: true, throwOnMissing: true, maxAge: 0 })] as const;
      } catch (e) {
        if (e instanceof ParameterNotFoundError) {
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
