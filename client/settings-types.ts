/** The settings the client reads and saves (`GET` and `PUT /v1/settings`). */

/** What `GET /v1/settings` and `PUT /v1/settings` answer (docs/configuration.md, "Tunables"). */
export interface Settings {
  /** The overrides stored for the tenant, or for the project with `projectId`. */
  overrides: SettingsInput;
  /** The tunables in effect: the defaults, the deployment's environment, then the overrides. */
  effective: Tunables;
}

/** The compaction tunables (docs/configuration.md, "Tunables"). */
export interface Tunables {
  softThreshold: number;
  hardThreshold: number;
  prepareThreshold: number;
  emergencyThreshold: number;
  keepRecent: number;
  softAnchor: number;
  hardAnchor: number;
  emergencyAnchor: number;
  maxSourceChars: number;
  summaryMinTokens: number;
  summaryMaxTokens: number;
  summaryWindowShare: number;
  softMinFoldTokens: number;
  foldTarget: number;
  foldMinRoomTokens: number;
  recallMaxTokens: number;
  recallInSystem: boolean;
  summarizerConcurrency: number;
  maxSummarizerCalls: number;
  foldCurrentTurn: number;
  clearThreshold: number;
  keepToolResults: number;
  clearMinResultTokens: number;
  clearMinSaving: number;
  sideChannelEnabled: boolean;
  inlineOnCompaction: boolean;
  /** Days an archived original is kept; null keeps it forever over the layers below. */
  retentionDays?: number | null;
  /** The prompt's absolute budget in tokens: the window is the smaller of the model's and this; null lifts a cap set below. */
  maxPromptTokens?: number | null;
  /** Share of the model's window the evidence ledger's section may take (0 = no section). */
  ledgerWindowShare: number;
  ledgerMaxTokens: number;
  /** An engine's own tool names and what each does, for the evidence ledger. */
  ledgerTools?: Record<string, "read" | "create" | "edit" | "delete" | "command" | "patch" | "search" | "ignore">;
}

/** What `PUT /v1/settings` takes: any of the tunables; each replaces the stored one. */
export type SettingsInput = Partial<Tunables>;
