/**
 * The summarizer providers and what every part of the service must know about each: one entry
 * per provider (docs/summarizers.md, "Adding a provider"). Pure data, no SDK: the stacks import
 * it for the functions' environment, the IAM grant on each key parameter and the KMS grant;
 * core/adapters/llm/providers.ts adds the factory of each summarizer; the env reader
 * (create-summarizer.ts) and the key loader (core/adapters/secrets/llm-secrets.ts) derive their
 * variables from it.
 */

/** How a remote provider is configured and reached. */
export interface RemoteProviderDescriptor {
  /** The variable holding its API key (set at cold start from SSM in AWS, from the shell locally). */
  keyEnv: string;
  /** The variable holding the NAME of the SSM SecureString parameter with its key (docs/deploy.md). */
  keyParamEnv: string;
  /** Last part of that parameter's name: `/vancetope-memory/<stage>/<keyParameter>`. */
  keyParameter: string;
  /** The variable pointing it at a compatible server instead of the vendor's API. */
  baseUrlEnv: string;
}

export interface ProviderDescriptor {
  /**
   * Its model when SUMMARIZER_MODEL names none. The context window of that model comes from the
   * table of known models (core/domain/model-windows.ts), else SUMMARIZER_CONTEXT_WINDOW.
   */
  defaultModel: string;
  /** Absent for a provider that runs in process and needs neither key nor server. */
  remote?: RemoteProviderDescriptor;
  /**
   * A provider fold (docs/summarizers.md, "Provider folds"): the provider writes the fold's block
   * over the wire, key and base URL of the remote provider named here.
   */
  wire?: "openai" | "anthropic";
}

/**
 * Every provider, in the order SUMMARIZER-less selection tries them: the first remote provider
 * whose key or base URL is set wins, else `offline`. A provider fold is chosen by name only.
 */
export const PROVIDERS = {
  offline: { defaultModel: "offline-extractive-v1" },
  openai: {
    defaultModel: "gpt-4o-mini",
    remote: {
      keyEnv: "OPENAI_API_KEY",
      keyParamEnv: "OPENAI_API_KEY_PARAM",
      keyParameter: "openai-api-key",
      baseUrlEnv: "OPENAI_BASE_URL",
    },
  },
  anthropic: {
    defaultModel: "claude-3-5-haiku-latest",
    remote: {
      keyEnv: "ANTHROPIC_API_KEY",
      keyParamEnv: "ANTHROPIC_API_KEY_PARAM",
      keyParameter: "anthropic-api-key",
      baseUrlEnv: "ANTHROPIC_BASE_URL",
    },
  },
  "anthropic-compaction": { defaultModel: "claude-sonnet-4-6", wire: "anthropic" },
  "openai-compaction": { defaultModel: "gpt-5", wire: "openai" },
} as const satisfies Record<string, ProviderDescriptor>;

export type ProviderName = keyof typeof PROVIDERS;
/** The providers reached over the network, each with a key parameter and a base URL. */
export type RemoteProviderName = {
  [P in ProviderName]: (typeof PROVIDERS)[P] extends { remote: RemoteProviderDescriptor } ? P : never;
}[ProviderName];

export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [ProviderName, ...ProviderName[]];

export const REMOTE_PROVIDERS: ReadonlyArray<readonly [RemoteProviderName, RemoteProviderDescriptor]> = PROVIDER_NAMES.flatMap(
  (name) => {
    const d: ProviderDescriptor = PROVIDERS[name];
    return d.remote ? [[name as RemoteProviderName, d.remote] as const] : [];
  },
);

/**
 * SSM parameter name of one provider's key for a stage: `/<service>/<stage>/<keyParameter>`.
 *
 * @example keyParameterName("vancetope-memory", "team-a", "openai") // "/vancetope-memory/team-a/openai-api-key"
 */
export const keyParameterName = (service: string, stage: string, provider: RemoteProviderName) =>
  `/${service}/${stage}/${PROVIDERS[provider].remote.keyParameter}`;
