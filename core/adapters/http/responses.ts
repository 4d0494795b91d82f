/**
 * The HTTP answers (docs/api.md) as zod schemas: every response body of every route, and the error
 * body with the codes each status carries. The routes answer with the services' typed results and
 * never parse these (a parse per answer would cost every turn); the OpenAPI generator
 * (tools/openapi/) describes the answers from them, and the tests check real answers against them.
 * No Lambda bundle imports this module.
 */
import * as z from "../../domain/zod.js";
import { InboxItem, LossUnit, Memory, Message, Process } from "../../domain/model.js";
import { CompactionResult } from "../../domain/compaction-result.js";
import { Ledger } from "../../domain/ledger/model.js";
import { Tunables, TunablesOverride } from "../../domain/tunables.js";
import { PrefixReason } from "../../domain/prefix.js";
import { NativeFormat } from "../../domain/native/formats.js";
import { LastTurn, TurnWindowShape } from "../../domain/last-turn.js";

const count = () => z.int().check(z.nonnegative());

export const HealthAnswer = z.object({ ok: z.literal(true) });

export const ProcessAnswer = z.object({
  process: Process,
  /** `GET /v1/processes/{id}`: the record of the process's last turn (docs/turns.md, "The last turn's record"). */
  lastTurn: z.optional(LastTurn),
});
export const ProcessPage = z.object({ items: z.array(Process), nextCursor: z.optional(z.string()) });
export const DeletingAnswer = z.object({ status: z.literal("deleting") });
export const ImportAnswer = z.object({
  process: Process,
  messages: count(),
  memories: count(),
  settings: z.enum(["restored", "kept", "refused", "none"]),
});

export const MessageAnswer = z.object({ message: Message });
export const MessagePage = z.object({ items: z.array(Message), nextCursor: z.optional(z.string()) });

export const ContextSection = z.object({ name: z.string(), content: z.string(), cache: z.enum(["static", "dynamic"]) });
export const ContextAnswer = z.object({ block: z.string(), sections: z.array(ContextSection), staticBlock: z.string() });

const JsonObjects = z.array(z.record(z.string(), z.unknown()));

/** A turn's `request`, by the format it named (docs/turns.md, "The request in the engine's format"). */
export const ReplayRequestAnswer = z.union([
  z.object({ system: JsonObjects, messages: JsonObjects }),
  z.object({ input: JsonObjects, prompt_cache_key: z.optional(z.string()) }),
  z.object({ messages: JsonObjects, prompt_cache_key: z.optional(z.string()) }),
  z.object({ contents: JsonObjects, systemInstruction: z.optional(z.record(z.string(), z.unknown())) }),
  z.object({ prompt: JsonObjects }),
]);

/** What changed in the replay since the process's previous turn (docs/turns.md, "What the answer says happened"). */
export const SinceLastTurnAnswer = z.object({
  folds: z.array(z.string()),
  more: z.optional(z.literal(true)),
  reverted: z.optional(z.literal(true)),
});

/** The prompt the answer makes is still larger than its window (docs/turns.md, "A prompt larger than the window"). */
export const OverWindowAnswer = z.object({
  tokens: count(),
  window: count(),
  reason: z.enum(["message_larger_than_window", "not_reduced"]),
  messageIds: z.optional(z.array(z.string())),
});

/** `POST …/compaction`: the result and the window it used. */
export const CompactionAnswer = z.extend(CompactionResult, { window: TurnWindowShape });

export const TurnAnswer = z.object({
  compaction: CompactionResult,
  window: TurnWindowShape,
  summaryId: z.nullable(z.string()),
  sinceLastTurn: z.optional(SinceLastTurnAnswer),
  overWindow: z.optional(OverWindowAnswer),
  context: ContextAnswer,
  messages: z.array(Message),
  request: z.optional(ReplayRequestAnswer),
  /** Whether the prompt starts with the previous turn's (docs/turns.md, "Append-only between folds"). */
  prefix: z.object({ kept: z.boolean(), reason: z.optional(PrefixReason), openLoop: z.optional(z.object({ messageId: z.string() })) }),
  /** How `request` replays a summary that holds a provider's block (docs/turns.md, "The provider's block"). */
  providerBlock: z.optional(
    z.object({ memoryId: z.string(), format: NativeFormat, sent: z.boolean(), reason: z.optional(z.enum(["format", "model", "refused"])) }),
  ),
  messagesWithoutNative: z.optional(z.literal(true)),
});

export const RangeAnswer = z.object({
  memoryId: z.nullable(z.string()),
  compactedMessages: count(),
  markerMessageId: z.nullable(z.string()),
  reason: z.optional(z.string()),
});

/**
 * A memory as listed and as `GET …/memories/{memoryId}` shows it: without the per-line citations,
 * the full loss list, the units to keep and the evidence ledger (core/services/memories.ts,
 * `withoutDetail`), which the detail answers as `loss`, `provenance` and `ledger` instead.
 */
export const ListedMemory = z.omit(Memory, { citations: true, droppedUnits: true, keepUnits: true, ledger: true });

export const MemoryList = z.object({ items: z.array(ListedMemory) });
export const MemoryDetailAnswer = z.object({
  memory: ListedMemory,
  loss: z.nullable(z.object({ units: count(), kept: count(), dropped: z.array(LossUnit) })),
  provenance: z.array(z.object({ line: z.int().check(z.positive()), text: z.string(), messageIds: z.array(z.string()) })),
  /** The evidence ledger in full (docs/evidence-ledger.md, "The evidence ledger"); null when the summary has none. */
  ledger: z.nullable(Ledger),
});
/** `expired`: the source ids whose originals passed their retention (docs/configuration.md, "Retention"). */
/** A memory as stored, its ledger in the shape the service writes (the domain schema only checks it is an object). */
export const StoredMemory = z.extend(Memory, { ledger: z.optional(Ledger) });
export const MemorySourcesAnswer = z.object({ memory: StoredMemory, items: z.array(Message), expired: z.array(z.string()) });
export const RevertAnswer = z.object({ memory: StoredMemory, restoredMessages: count(), activeSummaryId: z.nullable(z.string()) });

export const SearchAnswer = z.object({ items: z.array(z.object({ message: Message, score: z.number() })) });

export const SettingsAnswer = z.object({ overrides: TunablesOverride, effective: Tunables });

export const InboxList = z.object({ items: z.array(InboxItem) });
export const InboxItemAnswer = z.object({ item: InboxItem });

/** `GET /local/events` (local runner only): what the service published for the key's tenant. */
export const LocalEventsAnswer = z.object({
  items: z.array(z.object({ source: z.string(), detailType: z.string(), detail: z.record(z.string(), z.unknown()), time: z.string() })),
});

/**
 * The error codes each status carries (core/domain/errors.ts: the kind decides the status). A unit
 * test reads every code the service raises from the source and fails when one is missing here. A
 * 500 always says `internal`: an internal error's own code stays in the log.
 */
export const ERROR_CODES = {
  400: [
    "request.invalid",
    "request.malformed_json",
    "request.malformed_text",
    "cursor.invalid",
    "model.context_window_invalid",
    "summarizer.cap_too_small",
    "tunables.summarizer_window_too_small",
    "range.invalid",
    "tunables.invalid",
    "import.invalid_line",
    "import.version_unsupported",
    "import.truncated",
    "import.foreign_line",
    "import.duplicate_id",
    "import.dangling_reference",
    "import.changed",
    "import.inconsistent",
    "model.context_window_required",
    "memory.no_block",
  ],
  401: ["auth.invalid_key"],
  404: ["route.not_found", "process.not_found", "message.not_found", "memory.not_found", "inbox_item.not_found", "inbox item.not_found"],
  409: [
    "process.exists",
    "process.deleted",
    "process.importing",
    "export.changed",
    "process.busy",
    "message.archived",
    "message.busy",
    "memory.not_newest",
    "memory.failed",
    "memory.reverted",
    "memory.originals_expired",
    "inbox.already_answered",
    "compaction.retry_later",
    "idempotency.key_reused",
  ],
  413: ["request.too_large", "message.too_large", "message.too_many_parts", "store.item_too_large", "turn.answer_too_large", "import.too_many_items"],
  429: ["rate.limited", "budget.exceeded", "import.rate_limited"],
  500: ["internal"],
} as const;
export type ErrorStatus = keyof typeof ERROR_CODES;

/** The error body of one status: `{ error: { code, message, details? } }`, `code` one of the status's codes. */
export const errorBody = (status: ErrorStatus) =>
  z.object({
    error: z.object({
      code: z.enum(ERROR_CODES[status]),
      message: z.string(),
      /** What the caller can act on: `fields` at fault, a `limit`, `retryAfterSeconds`, the ids involved. */
      details: z.optional(z.record(z.string(), z.unknown())),
    }),
  });

/**
 * What API Gateway answers itself before any route runs (docs/api.md): 401 without an
 * `Authorization` header, 403 for a key the authorizer denies, 429 for the stage-wide throttle.
 */
export const GatewayMessage = z.object({ message: z.string() });
