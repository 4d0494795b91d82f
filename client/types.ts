/**
 * The wire shapes of the HTTP API (docs/api.md) as plain types, so an engine can use the client
 * without the service's own code or any runtime dependency. They are kept by hand, and
 * test/types/client-wire.ts fails to compile when one drifts from what the service accepts or
 * answers; a new export must be compared there too (test/unit/client-wire-coverage.test.ts).
 */
/** The engine's own `system` and `tools` as it sends them to its model (at most 64 KiB of JSON). */
export interface Conversation {
  system?: unknown;
  tools?: unknown[];
}

export type Role = "USER" | "ASSISTANT" | "SYSTEM" | "TOOL";
/** A role as a message may be sent: upper case, or lower case as the model SDKs write it (stored upper case). */
export type RoleInput = Role | "user" | "assistant" | "system" | "tool";
export type CompactionMode = "NONE" | "SOFT" | "HARD" | "EMERGENCY";
export type Strength = "weak" | "normal" | "strong" | "pinned";
export type StrengthTag = "STRENGTH:weak" | "STRENGTH:normal" | "STRENGTH:strong" | "STRENGTH:pinned";

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model produced them: a JSON string. */
  arguments: string;
}

export interface Message {
  id: string;
  processId: string;
  role: Role;
  content: string;
  tags: string[];
  createdAt: string;
  archivedInMemoryId: string | null;
  toolCallId?: string;
  toolCalls?: ToolCall[];
  /** The service's token estimate of the message (chars/4 plus overhead; a placeholder's once cleared). */
  tokens: number;
  /**
   * Set on a TOOL result cleared from the replay: `content` in a replay is then a placeholder, and
   * `getMessage(processId, id)` returns the full result.
   */
  cleared?: { at: string; toolName: string; chars: number; tokens: number; epoch?: number; errors?: string[] };
  /** Only in a replay: a placeholder result for a tool call whose result never arrived. */
  missingResult?: true;
  /** An archived original under a retention: when the service stops keeping it. Never on an active message. */
  expiresAt?: string;
  /** What the model API returned, or the engine sent, exactly; `content` and `toolCalls` are its text projection. */
  native?: NativeContent;
  /** Every call the message answers, when its native content answers more than one. */
  toolCallIds?: string[];
}

/** The provider formats native content may be in. */
export type NativeFormat = "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
/** The formats a turn's `request` can be asked in (`openai-chat`: Chat Completions, which keeps no reasoning). */
export type ReplayFormat = NativeFormat | "openai-chat";

/** A provider message's content as the model API returned it (Anthropic `content`, Responses items, Gemini `parts`, AI SDK parts), kept exactly. */
export interface NativeContent {
  format: NativeFormat;
  content: unknown[];
}

/** A turn's `request`: the part of the engine's request body in `format` that the service owns. */
export type ReplayRequest =
  | { system: Record<string, unknown>[]; messages: Record<string, unknown>[] }
  | { input: Record<string, unknown>[]; prompt_cache_key?: string }
  | { messages: Record<string, unknown>[]; prompt_cache_key?: string }
  | { contents: Record<string, unknown>[]; systemInstruction?: Record<string, unknown> }
  | { prompt: Record<string, unknown>[] };

/** A salient unit (name, number, date, identifier, ...) of folded messages that a summary no longer carries. */
export interface LossUnit {
  text: string;
  messageIds: string[];
}

/** OK and FAILED: summaries and failures; REVERTED: an undone compaction; QUEUED, PREPARED, DISCARDED: background folds, never replayed. */
export type MemoryStatus = "OK" | "FAILED" | "REVERTED" | "QUEUED" | "PREPARED" | "DISCARDED";

export interface Memory {
  id: string;
  processId: string;
  kind: "ARCHIVED_CHAT";
  status: MemoryStatus;
  content: string;
  sourceRefs: string[];
  metadata: {
    compactedMessages: number;
    provider: string;
    model: string;
    supersededMemoryId?: string;
    recompaction?: boolean;
    topicLabel?: string;
    rangeFromAt?: string;
    rangeToAt?: string;
    error?: string;
    /** The compaction mode; RANGE on a range compaction. */
    mode?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
    /** The prompt before and after the fold, as recorded at commit time (the caller's units). */
    tokensBefore?: number;
    tokensAfter?: number;
    /** What the fold lost: salient units of the folded messages, how many the summary kept, the most salient dropped. */
    loss?: { units: number; kept: number; dropped: LossUnit[]; ledger?: { items: number; listed: number } };
    /** The evidence ledger's section of the memory block as the fold rendered it, with its counts. */
    ledger?: LedgerSection;
    /** Wall time of all summarizer calls of this fold, in ms. */
    summarizerMs?: number;
    producedBy?: "inline" | "prepared" | "worker";
    /** Background folds: the mode they were prepared for, and why one was discarded. */
    preparedFor?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
    discardReason?: string;
    /** The SYSTEM marker message a range compaction inserted. */
    markerMessageId?: string;
    /** When the compaction was undone (status REVERTED). */
    revertedAt?: string;
    /** The retention in force when the fold committed: its originals expire this many days after `createdAt`. */
    retentionDays?: number;
    /** A fold a provider wrote: its block's format, whether the memory holds it, why not, what else it stands for. */
    providerFold?: { format: NativeFormat; block: boolean; note?: string; covered?: string[]; refused?: { at: string; error?: string } };
    [extra: string]: unknown;
  };
  createdAt: string;
  supersededAt: string | null;
  supersededByMemoryId?: string;
  /** A provider fold's block, exactly as the provider returned it; `content` is its readable summary. */
  native?: NativeContent;
  /** A block past 64 KiB in a listing: where it is kept (`native` absent); the memory's own GET answers it whole. */
  nativeBlob?: { format: NativeFormat; sha256: string; bytes: number };
  /** Token estimate of `content` and its evidence ledger's section: what the summary costs in every replay. */
  tokens: number;
}

/** What `GET /v1/processes/{processId}/memories/{memoryId}/sources` answers: the originals a summary folded. */
export interface MemorySources {
  memory: Memory;
  /** The folded messages, oldest first. */
  items: Message[];
  /** Ids of folded messages a retention has removed (docs/configuration.md, "Retention"). */
  expired: string[];
}

export type { Settings, SettingsInput, Tunables } from "./settings-types.js";

/** What `GET /v1/processes/{processId}/memories/{memoryId}` answers. */
export interface MemoryDetail {
  memory: Memory;
  /** Every dropped unit stored (not only the preview in `metadata.loss`), or null when none was measured. */
  loss: { units: number; kept: number; dropped: LossUnit[] } | null;
  /** Per line of the summary (1-based), the messages it came from. */
  provenance: Array<{ line: number; text: string; messageIds: string[] }>;
  /** The evidence ledger in full, each entry with the message it cites; null when the summary has none. */
  ledger: Ledger | null;
}

/** The evidence ledger's section as a fold rendered it (docs/evidence-ledger.md, "The evidence ledger"). */
export interface LedgerSection {
  text: string;
  tokens: number;
  budgetTokens: number;
  files: number;
  commands: number;
  errors: number;
  openErrors: number;
  constraints: number;
}

/** The evidence ledger of a summary: each list oldest first by its last touch. */
export interface Ledger {
  files: Array<{ path: string; op: "read" | "created" | "edited" | "deleted"; messageId: string }>;
  commands: Array<{ command: string; outcome: string; messageId: string; resultId?: string; runs: number }>;
  errors: Array<{ text: string; messageId: string; source?: string; resolvedBy?: string }>;
  constraints: Array<{ text: string; messageId: string }>;
  pending: Array<{ callId: string; command?: string; source: string; reads?: true }>;
  evicted: { files: number; commands: number; errors: number; constraints: number };
}

export interface Process {
  processId: string;
  projectId: string;
  sessionId?: string;
  parentProcessId?: string;
  name?: string;
  recipe?: string;
  engine?: string;
  title?: string;
  allowsCrossProjectSpawn: boolean;
  createdAt: string;
  /** The engine's own `system` and `tools`, which a provider fold sends with the folded turns. */
  conversation?: Conversation;
}

export interface InboxItem {
  id: string;
  processId: string;
  type: "APPROVAL";
  tags: string[];
  status: "OPEN" | "ACCEPTED" | "DECLINED";
  payload: { from: string; to: string; topicLabel: string };
  createdAt: string;
  answeredAt?: string;
  /** An accepted offer's range job: the memory id of the fold that carries it out. */
  rangeJobId?: string;
}

export interface CompactionResult {
  mode: CompactionMode;
  compacted: boolean;
  memoryId?: string;
  compactedMessages: number;
  tokensBefore: number;
  tokensAfter: number;
  /** Why nothing was folded (e.g. `nothing_eligible`, `compaction_in_progress`). */
  reason?: string;
  /**
   * A turn whose prompt would pass the emergency threshold while its fold is queued: how many of
   * the oldest foldable messages the answer left out, their tokens, and the ids of the oldest
   * (`fromMessageId`) and the newest (`toMessageId`) of them. The stored history keeps them
   * (`GET .../messages?view=active` lists them) and recall reaches them. They need not be
   * contiguous: pinned messages and tool groups that must stay may sit between them, in the answer.
   */
  trimmed?: { messages: number; tokens: number; fromMessageId?: string; toMessageId?: string };
  /** Tool results this call cleared from the replay before deciding on a fold. */
  clearedMessages?: number;
  /** The fold this call committed: who wrote it, whether a provider did and its block came with it, its tokens and ms. */
  fold?: { by: string; kind: "service" | "provider"; block: boolean; inputTokens: number; outputTokens: number; ms: number };
}

/** The window a turn or a compaction used: `request` (`model.contextWindow`), `model` (a known name, matched as `model`), `setting` (`maxPromptTokens`). */
export interface TurnWindow {
  tokens: number;
  source: "request" | "model" | "setting";
  model?: string;
}

/** The record the service keeps of a process's last turn: the window it used, the summary it replayed, META's version then. */
export interface LastTurn {
  at: string;
  window: TurnWindow;
  summaryId: string | null;
  version: number;
  /** What decided the last turn's prompt besides its appends (docs/turns.md, "Append-only between folds"). */
  replay?: { epoch: number; format: string; head: string; recall: string; trim?: string; cleared: number; open: string[] | null; since?: string };
  /** `turn`: the last turn's model folds whole turns only, and range jobs keep to it (docs/turns.md, "What a fold may keep"). */
  foldUnit?: "turn";
}

/** The answer of `GET /v1/processes/{id}`: the process and, once it had a turn, the record of its last one. */
export interface ProcessDetail {
  process: Process;
  lastTurn?: LastTurn;
}

/** The answer of `POST .../compaction`: the result and the window it used. */
export interface CompactionAnswer extends CompactionResult {
  window: TurnWindow;
}

/** Folds committed since the process's previous turn, oldest first; `more`: more than listed; `reverted`: the previous summary was undone (then `folds` is empty). */
export interface SinceLastTurn {
  folds: string[];
  more?: true;
  reverted?: true;
}

/** The prompt a turn's answer makes is still larger than the window: `message_larger_than_window` (names them) or `not_reduced` (see `compaction.reason`). */
export interface OverWindow {
  tokens: number;
  window: number;
  reason: "message_larger_than_window" | "not_reduced";
  messageIds?: string[];
}

export interface RangeCompactionResult {
  memoryId: string | null;
  compactedMessages: number;
  markerMessageId: string | null;
  reason?: string;
}

export interface ContextSection {
  /** The `##` heading, e.g. `Earlier Conversation (compacted)` or `Parent Context`. */
  name: string;
  content: string;
  /** `static` sections change only on compaction: they belong before the prompt-cache breakpoint. */
  cache: "static" | "dynamic";
}

/** The memory block for the system prompt. */
export interface MemoryContext {
  /** Every section, static ones first; empty when there is nothing to replay. */
  block: string;
  sections: ContextSection[];
  /** The prefix of `block` that is byte-identical between turns until the next compaction. */
  staticBlock: string;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** What `POST /v1/processes/{id}/turns` answers: everything an engine needs for its LLM call. */
export interface Turn {
  compaction: CompactionResult;
  /** The window the turn used. */
  window: TurnWindow;
  /** The summary the answer replays (null: none). */
  summaryId: string | null;
  /** Absent on a process's first recorded turn. */
  sinceLastTurn?: SinceLastTurn;
  overWindow?: OverWindow;
  /** The memory block (`context.block`) and its cacheable prefix (`context.staticBlock`). */
  context: MemoryContext;
  /** The active (unarchived) messages, oldest first, the new message included. */
  messages: Message[];
  /** With `format`: the part of that provider's request body the service owns. */
  request?: ReplayRequest;
  /**
   * Whether this turn's prompt starts with the previous turn's, element for element: false after a
   * fold, an undo, a trim at the emergency threshold, a changed format, ... (`reason`).
   */
  prefix: PrefixInfo;
  /** When the replayed summary holds a provider's block: whether `request` carries it, and why not. */
  providerBlock?: ProviderBlockReplay;
  /** True when the answer would have passed 6 MB: `messages` then leave native content to `request`. */
  messagesWithoutNative?: true;
}

/** Why a turn's prompt does not start with the previous turn's. */
export type PrefixReason = "first_turn" | "fold" | "revert" | "format" | "trim" | "clear" | "parent" | "recall" | "tool_result" | "block_refused";

/** A turn's `providerBlock`: whether `request` carries the replayed memory's block; if not, why (another `format`, a `model` of another family, `refused` by the provider). */
export type ProviderBlockReplay = { memoryId: string; format: NativeFormat; sent: boolean; reason?: "format" | "model" | "refused" };

/** A turn's `prefix`: whether its prompt is the previous turn's plus what was appended; `openLoop`: the fold was cut before this unfinished loop's call turn (sent with its thinking). */
export type PrefixInfo = { kept: boolean; reason?: PrefixReason; openLoop?: { messageId: string } };

export type SearchHit = { message: Message; score: number };

/** The answer of `POST .../memories/{memoryId}/revert`. */
export interface RevertResult {
  memory: Memory;
  /** How many messages are active again. */
  restoredMessages: number;
  /** The summary replayed now, or null when none is. */
  activeSummaryId: string | null;
}
