/** What the client sends: the request bodies of the HTTP API (docs/api.md), as the routes accept them. */
import type { RoleInput, ToolCall, NativeContent, ReplayFormat, CompactionMode, Conversation } from "./types.js";

export interface ModelRef {
  provider?: string;
  name?: string;
  /** Required unless the service knows `name` (gpt-4o, claude-…). */
  contextWindow?: number;
}

/** The size of the prompt the engine is about to send; without it the service estimates the replay. */
export interface PromptSize {
  tokens?: number;
  chars?: number;
  text?: string;
}

export interface UpsertProcessInput {
  projectId: string;
  sessionId?: string;
  parentProcessId?: string;
  name?: string;
  recipe?: string;
  engine?: string;
  title?: string;
  allowsCrossProjectSpawn?: boolean;
  conversation?: Conversation;
}


export interface AppendMessageInput {
  /** Required, except where the native content decides it. */
  role?: RoleInput;
  /** Required without `native`; with it, derived (the text projection) when left out. */
  content?: string;
  tags?: string[];
  /**
   * A retry with the same key returns the first message instead of appending twice; the same key
   * with another body is refused (409 `idempotency.key_reused`).
   */
  idempotencyKey?: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
  /** The message exactly as the model API returned it (or as the engine sends it). */
  native?: NativeContent;
}

export interface CompactInput {
  model: ModelRef;
  prompt?: PromptSize;
  force?: Exclude<CompactionMode, "NONE">;
  instructions?: string;
}

export interface CompactRangeInput {
  from: string;
  to: string;
  topicLabel: string;
}

export interface BeginTurnInput {
  /** The turn's new message (usually the user's), appended before anything else. */
  message?: AppendMessageInput;
  model: ModelRef;
  prompt?: PromptSize;
  query?: string;
  /** The engine's request format: the answer then carries `request`. */
  format?: ReplayFormat;
  /** The provider refused the block `providerBlock.memoryId` named (e.g. `invalid_encrypted_content`): replay the readable summary. */
  blockRefused?: { memoryId: string; error?: string };
}
