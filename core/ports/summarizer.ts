/** The Summarizer port: folds a prior summary and a run of messages into one new summary. */
import type { Role, ToolCall } from "../domain/model.js";

export interface SummarySourceMessage {
  id: string;
  role: Role;
  content: string;
  createdAt: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
}

export interface SummarizeInput {
  /** The process's active summary before this fold, if any (the chain). */
  priorSummary: string | null;
  /** Messages to fold, oldest first. Never includes the triggering turn. */
  messages: SummarySourceMessage[];
  /** Extra guidance from a manual compaction (`instructions` of the API). */
  instructions?: string;
  /** Optional topic for range compactions. */
  topicLabel?: string;
}

export interface SummarizerUsage {
  inputTokens?: number;
  outputTokens?: number;
}

export type SummarizeOutcome =
  | { ok: true; summary: string; usage?: SummarizerUsage }
  | { ok: false; error: string; usage?: SummarizerUsage };

export interface Summarizer {
  /** `openai`, `anthropic` or `offline`: stored as `metadata.provider`. */
  readonly provider: string;
  readonly model: string;
  /** Context window of the summarizer's own model, in tokens. */
  readonly contextWindow: number;
  /** Output budget of one summary, in tokens (enforced). */
  readonly maxOutputTokens: number;
  /**
   * Never throws for provider trouble: a timeout, a 5xx after retries, or an answer without a
   * summary block comes back as `{ ok: false, error }`.
   */
  summarize(input: SummarizeInput): Promise<SummarizeOutcome>;
}
