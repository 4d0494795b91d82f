/**
 * The client package (client/index.ts, client/types.ts) is written by hand so that it needs none
 * of the service's code; this file fails to compile when a type it exports drifts from what the
 * service accepts (the routes' schemas, core/adapters/http/schemas.ts) or answers (the models of
 * core/domain/model.ts and the use cases the routes return). Each comparison is an equality both
 * ways, so a field that is optional on one side and required on the other fails too.
 * test/unit/client-wire-coverage.test.ts fails when an exported type is neither compared here nor
 * named in `ClientOnly`. Checked by `tsc -p tsconfig.json` and, inside `npm test`, by
 * test/unit/type-checks.test.ts. Nothing here runs.
 */
import { expectTypeOf } from "vitest";
import type * as z from "zod";
import type * as client from "../../client/index.js";
import type * as http from "../../core/adapters/http/schemas.js";
import type { ContextSection } from "../../core/domain/context-block.js";
import type * as server from "../../core/domain/model.js";
import type { CompactionResult } from "../../core/domain/compaction-result.js";
import type { Strength, STRENGTH_TAG_PREFIX } from "../../core/domain/strength.js";
import type { ComposedContext } from "../../core/services/context.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import type { listInbox } from "../../core/services/inbox.js";
import type { deleteProcess } from "../../core/services/process-deletion.js";
import type { ImportResult } from "../../core/services/process-import.js";
import type { compactManually } from "../../core/services/compaction/manual-compaction.js";
import type { MemoryDetail } from "../../core/services/memories.js";
import type { Ledger } from "../../core/domain/ledger/model.js";
import type { LedgerSection } from "../../core/domain/ledger/section.js";
import type { SettingsView } from "../../core/services/settings.js";
import type { Tunables, TunablesOverride } from "../../core/domain/tunables.js";
import type { compactRange } from "../../core/services/compaction/range-compaction.js";
import type { RevertResult } from "../../core/services/compaction/revert.js";
import type { runTurn } from "../../core/services/turn.js";
import type { LastTurn } from "../../core/domain/last-turn.js";
import type { ProcessAnswer } from "../../core/adapters/http/responses.js";
import type { NativeContent, NativeFormat, ReplayFormat } from "../../core/domain/native/formats.js";
import type { ReplayRequest } from "../../core/domain/native/replay-request.js";
import type { PrefixAnswer, PrefixReason } from "../../core/domain/prefix.js";
import type { BlockReplay } from "../../core/domain/native/block-request.js";

/**
 * The client's own shapes, never sent or accepted by the service: its options and error, and the
 * OpenAI, Anthropic and Gemini request shapes its prompt helpers build.
 */
export type ClientOnly =
  | "MemoryClientOptions"
  | "RequestOptions"
  | "MemoryApiError"
  | "PromptOptions"
  | "OpenAIChatMessage"
  | "OpenAIToolCall"
  | "AnthropicOptions"
  | "AnthropicRequest"
  | "AnthropicMessage"
  | "AnthropicContentBlock"
  | "AnthropicTextBlock"
  | "AnthropicToolUseBlock"
  | "AnthropicToolResultBlock"
  | "OpenAIResponsesItem"
  | "GeminiPart"
  | "GeminiContent"
  | "GeminiRequest";

/** What a route answers: the awaited result of the use case it returns. */
type Answer<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
/** `POST .../turns` answers `runTurn`'s result as is. */
type TurnAnswer = Answer<typeof runTurn>;
/** `POST .../compaction/range` answers the result without `budget` (a 429 instead). */
type RangeAnswer = Omit<Answer<typeof compactRange>, "budget">;
/** `POST .../compaction` answers the `result` (its status is the HTTP status). */
type CompactionAnswer = Answer<typeof compactManually>["result"];
/** `GET .../history/search` answers what the container's history search finds. */
type SearchAnswer = Answer<ServiceDeps["history"]["search"]>;
/** `GET .../context` answers the composed context, as the turn's `context`. */
type ContextAnswer = ComposedContext;

/** Stored beside a summary but left out of every answer (`withoutDetail` in core/services/memories.ts). */
type DetailOnly = "citations" | "droppedUnits" | "keepUnits" | "ledger";
type WireMemory = Omit<server.Memory, DetailOnly>;
/** The keys a type names, without its index signature. */
type Named<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
type ClientMetadata = client.Memory["metadata"];

// ------------------------------------------------------------------ what the service answers

expectTypeOf<client.Role>().toEqualTypeOf<server.Role>();
expectTypeOf<client.RoleInput>().toEqualTypeOf<z.input<typeof server.RoleInput>>();
expectTypeOf<client.Strength>().toEqualTypeOf<Strength>();
expectTypeOf<client.StrengthTag>().toEqualTypeOf<`${typeof STRENGTH_TAG_PREFIX}${Strength}`>();
expectTypeOf<client.CompactionMode>().toEqualTypeOf<server.CompactionModeName>();
expectTypeOf<client.MemoryStatus>().toEqualTypeOf<server.MemoryStatus>();
expectTypeOf<client.ToolCall>().toEqualTypeOf<server.ToolCall>();
expectTypeOf<client.Message>().toEqualTypeOf<server.Message>();
expectTypeOf<client.NativeContent>().toEqualTypeOf<NativeContent>();
expectTypeOf<client.NativeFormat>().toEqualTypeOf<NativeFormat>();
expectTypeOf<client.ReplayFormat>().toEqualTypeOf<ReplayFormat>();
expectTypeOf<client.ReplayRequest>().toEqualTypeOf<ReplayRequest>();
expectTypeOf<client.PrefixReason>().toEqualTypeOf<PrefixReason>();
expectTypeOf<client.PrefixInfo>().toEqualTypeOf<PrefixAnswer>();
expectTypeOf<client.ProviderBlockReplay>().toEqualTypeOf<BlockReplay>();
expectTypeOf<client.LossUnit>().toEqualTypeOf<server.LossUnit>();
expectTypeOf<client.Ledger>().toEqualTypeOf<Ledger>();
expectTypeOf<client.LedgerSection>().toEqualTypeOf<LedgerSection>();
expectTypeOf<client.Process>().toEqualTypeOf<server.Process>();
expectTypeOf<client.InboxItem>().toEqualTypeOf<server.InboxItem>();
expectTypeOf<client.CompactionResult>().toEqualTypeOf<CompactionResult>();
expectTypeOf<client.CompactionAnswer>().toEqualTypeOf<CompactionAnswer>();
expectTypeOf<client.LastTurn>().toEqualTypeOf<LastTurn>();
expectTypeOf<client.ProcessDetail>().toEqualTypeOf<z.infer<typeof ProcessAnswer>>();
expectTypeOf<client.TurnWindow>().toEqualTypeOf<TurnAnswer["window"]>();
expectTypeOf<client.SinceLastTurn>().toEqualTypeOf<NonNullable<TurnAnswer["sinceLastTurn"]>>();
expectTypeOf<client.OverWindow>().toEqualTypeOf<NonNullable<TurnAnswer["overWindow"]>>();
expectTypeOf<client.Page<client.Message>>().toEqualTypeOf<server.Page<server.Message>>();
expectTypeOf<client.Page<client.Process>>().toEqualTypeOf<server.Page<server.Process>>();

// A memory: every top-level field, exactly. Its metadata: each field the client names has the
// server's type and optionality; the many internal ones it does not name it reads as unknown.
expectTypeOf<Omit<client.Memory, "metadata">>().toEqualTypeOf<Omit<WireMemory, "metadata">>();
expectTypeOf<Pick<server.MemoryMetadata, Named<ClientMetadata>>>().toEqualTypeOf<Pick<ClientMetadata, Named<ClientMetadata>>>();
expectTypeOf<server.MemoryMetadata>().toExtend<ClientMetadata>();
expectTypeOf<Omit<client.MemoryDetail, "memory">>().toEqualTypeOf<Omit<MemoryDetail, "memory">>();
expectTypeOf<client.MemoryDetail["memory"]>().toEqualTypeOf<client.Memory>();
expectTypeOf<Omit<client.RevertResult, "memory">>().toEqualTypeOf<Omit<RevertResult, "memory">>();
expectTypeOf<client.RevertResult["memory"]>().toEqualTypeOf<client.Memory>();
expectTypeOf<Omit<client.MemorySources, "memory">>().toEqualTypeOf<Omit<Answer<ServiceDeps["history"]["sources"]>, "memory">>();
expectTypeOf<client.MemorySources["memory"]>().toEqualTypeOf<client.Memory>();
expectTypeOf<client.Tunables>().toEqualTypeOf<Tunables>();
expectTypeOf<client.Settings>().toEqualTypeOf<SettingsView>();

// The per-turn answer and its parts.
expectTypeOf<client.Turn>().toEqualTypeOf<TurnAnswer>();
expectTypeOf<client.TurnLike>().toEqualTypeOf<Pick<TurnAnswer, "context" | "messages">>();
expectTypeOf<client.MemoryContext>().toEqualTypeOf<ContextAnswer>();
expectTypeOf<client.MemoryContext>().toEqualTypeOf<TurnAnswer["context"]>();
expectTypeOf<client.ContextSection>().toEqualTypeOf<ContextSection>();
expectTypeOf<client.RangeCompactionResult>().toEqualTypeOf<RangeAnswer>();
expectTypeOf<client.SearchHit>().toEqualTypeOf<SearchAnswer["items"][number]>();

// ------------------------------------------------------------------ what the client sends
// Each input type is exactly what the route's schema accepts (core/adapters/http/schemas.ts), so
// a field the service adds or renames breaks the build here.
expectTypeOf<client.ModelRef>().toEqualTypeOf<z.input<typeof http.ModelRef>>();
expectTypeOf<client.PromptSize>().toEqualTypeOf<z.input<typeof http.PromptSize>>();
expectTypeOf<client.UpsertProcessInput>().toEqualTypeOf<z.input<typeof http.PutProcessBody>>();
expectTypeOf<client.Conversation>().toEqualTypeOf<NonNullable<server.Process["conversation"]>>();
expectTypeOf<client.AppendMessageInput>().toEqualTypeOf<z.input<typeof http.AppendMessageBody>>();
expectTypeOf<client.CompactInput>().toEqualTypeOf<z.input<typeof http.CompactionBody>>();
expectTypeOf<client.CompactRangeInput>().toEqualTypeOf<z.input<typeof http.RangeCompactionBody>>();
expectTypeOf<client.BeginTurnInput>().toEqualTypeOf<z.input<typeof http.TurnBody>>();
expectTypeOf<client.SettingsInput>().toEqualTypeOf<z.input<typeof TunablesOverride>>();

// ------------------------------------------------------------------ the client's methods
// Each method answers what its route answers, and its query names the parameters the route reads
// (the client takes numbers and booleans where the query string carries their text).
type Method<K extends keyof client.MemoryClient> = client.MemoryClient[K];
type Returned<K extends keyof client.MemoryClient> = Awaited<ReturnType<Method<K>>>;
/** The query parameters a method takes as its argument `I`. */
type QueryKeys<K extends keyof client.MemoryClient, I extends number> = keyof NonNullable<Parameters<Method<K>>[I]>;
/** The per-call options (client-only), which share an argument with the import's query. */
type CallOptionKeys = keyof client.RequestOptions;

expectTypeOf<Returned<"beginTurn">>().toEqualTypeOf<TurnAnswer>();
expectTypeOf<Parameters<Method<"beginTurn">>[1]>().toEqualTypeOf<z.input<typeof http.TurnBody>>();
expectTypeOf<Returned<"upsertProcess">>().toEqualTypeOf<server.Process>();
expectTypeOf<Returned<"getProcess">>().toEqualTypeOf<server.Process>();
// 204 is `deleted`, 202 `{ status: "deleting" }`: the statuses the service's deletion answers.
expectTypeOf<Returned<"deleteProcess">["status"]>().toEqualTypeOf<Answer<typeof deleteProcess>["status"]>();
// An export is NDJSON lines; an import answers what the service's import returns.
expectTypeOf<Method<"exportProcess">>().returns.toEqualTypeOf<AsyncIterable<string>>();
expectTypeOf<Returned<"importProcess">>().toEqualTypeOf<ImportResult>();
expectTypeOf<Exclude<QueryKeys<"importProcess", 2>, CallOptionKeys>>().toEqualTypeOf<keyof z.input<typeof http.ImportQuery>>();
expectTypeOf<Returned<"listProcesses">>().toEqualTypeOf<server.Page<server.Process>>();
expectTypeOf<QueryKeys<"listProcesses", 0>>().toEqualTypeOf<keyof z.input<typeof http.ListProcessesQuery>>();
expectTypeOf<Returned<"appendMessage">["message"]>().toEqualTypeOf<server.Message>();
expectTypeOf<Returned<"listMessages">>().toEqualTypeOf<server.Page<server.Message>>();
expectTypeOf<QueryKeys<"listMessages", 1>>().toEqualTypeOf<keyof z.input<typeof http.ListMessagesQuery>>();
expectTypeOf<Returned<"getMessage">>().toEqualTypeOf<server.Message>();
expectTypeOf<Returned<"setMessageStrength">>().toEqualTypeOf<server.Message>();
expectTypeOf<Parameters<Method<"setMessageStrength">>[2]>().toEqualTypeOf<z.input<typeof http.PatchMessageBody>["strength"]>();
expectTypeOf<Returned<"compact">>().toEqualTypeOf<CompactionAnswer>();
expectTypeOf<Returned<"compactRange">>().toEqualTypeOf<RangeAnswer>();
expectTypeOf<Returned<"getContext">>().toEqualTypeOf<ContextAnswer>();
expectTypeOf<QueryKeys<"getContext", 1>>().toEqualTypeOf<keyof z.input<typeof http.ContextQuery>>();
expectTypeOf<Returned<"listMemories">>().toEqualTypeOf<{ items: client.Memory[] }>();
expectTypeOf<QueryKeys<"listMemories", 1>>().toEqualTypeOf<keyof z.input<typeof http.MemoriesQuery>>();
expectTypeOf<Returned<"revertMemory">>().toEqualTypeOf<client.RevertResult>();
expectTypeOf<Returned<"searchHistory">>().toEqualTypeOf<SearchAnswer>();
expectTypeOf<QueryKeys<"searchHistory", 1>>().toEqualTypeOf<keyof z.input<typeof http.SearchQuery>>();
expectTypeOf<Returned<"listInbox">>().toEqualTypeOf<{ items: Answer<typeof listInbox> }>();
expectTypeOf<QueryKeys<"listInbox", 0>>().toEqualTypeOf<keyof z.input<typeof http.InboxQuery>>();
expectTypeOf<Returned<"answerInboxItem">>().toEqualTypeOf<server.InboxItem>();
expectTypeOf<Parameters<Method<"answerInboxItem">>[1]>().toEqualTypeOf<z.input<typeof http.AnswerBody>>();
expectTypeOf<Returned<"getMemory">>().toEqualTypeOf<client.MemoryDetail>();
expectTypeOf<Returned<"getMemorySources">>().toEqualTypeOf<client.MemorySources>();
expectTypeOf<Returned<"getSettings">>().toEqualTypeOf<SettingsView>();
expectTypeOf<QueryKeys<"getSettings", 0>>().toEqualTypeOf<keyof z.input<typeof http.SettingsQuery>>();
expectTypeOf<Returned<"updateSettings">>().toEqualTypeOf<SettingsView>();
expectTypeOf<Parameters<Method<"updateSettings">>[0]>().toEqualTypeOf<z.input<typeof TunablesOverride>>();
expectTypeOf<QueryKeys<"updateSettings", 1>>().toEqualTypeOf<keyof z.input<typeof http.SettingsQuery>>();
expectTypeOf<Returned<"health">>().toEqualTypeOf<{ ok: true }>();

/** Every method is compared above: a new one fails here until its answer is. */
type ComparedMethods =
  | "beginTurn"
  | "upsertProcess"
  | "getProcess"
  | "deleteProcess"
  | "exportProcess"
  | "importProcess"
  | "listProcesses"
  | "appendMessage"
  | "listMessages"
  | "getMessage"
  | "setMessageStrength"
  | "compact"
  | "compactRange"
  | "getContext"
  | "listMemories"
  | "revertMemory"
  | "searchHistory"
  | "listInbox"
  | "answerInboxItem"
  | "getMemory"
  | "getMemorySources"
  | "getSettings"
  | "updateSettings"
  | "health"
  | "getOpenApiDocument";
expectTypeOf<keyof client.MemoryClient>().toEqualTypeOf<ComparedMethods>();
