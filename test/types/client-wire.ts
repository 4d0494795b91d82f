/**
 * client/types.ts is written by hand so that the client needs none of the service's code; this file
 * fails to compile when it drifts from the service's models (core/domain/model.ts and the use cases
 * that shape an answer) or from the routes' request schemas (core/adapters/http/schemas.ts).
 * Checked by `tsc -p tsconfig.json` and, inside `npm test`, by test/unit/type-checks.test.ts.
 * Nothing here runs.
 */
import { expectTypeOf } from "vitest";
import type * as z from "zod";
import type * as client from "../../client/types.js";
import type * as http from "../../core/adapters/http/schemas.js";
import type * as server from "../../core/domain/model.js";
import type { Strength } from "../../core/domain/strength.js";
import type { MemoryDetail } from "../../core/services/memories.js";
import type { RevertResult } from "../../core/services/revert.js";

/** Stored beside a summary but left out of every answer (`withoutDetail` in core/services/memories.ts). */
type DetailOnly = "citations" | "droppedUnits" | "keepUnits";
type WireMemory = Omit<server.Memory, DetailOnly>;
/** The keys a type names, without its index signature. */
type Named<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
type ClientMetadata = client.Memory["metadata"];

expectTypeOf<client.Role>().toEqualTypeOf<server.Role>();
expectTypeOf<client.Strength>().toEqualTypeOf<Strength>();
expectTypeOf<client.CompactionMode>().toEqualTypeOf<server.CompactionModeName>();
expectTypeOf<client.MemoryStatus>().toEqualTypeOf<server.MemoryStatus>();
expectTypeOf<client.ToolCall>().toEqualTypeOf<server.ToolCall>();
expectTypeOf<client.Message>().toEqualTypeOf<server.Message>();
expectTypeOf<client.LossUnit>().toEqualTypeOf<server.LossUnit>();
expectTypeOf<client.Process>().toEqualTypeOf<server.Process>();
expectTypeOf<client.InboxItem>().toEqualTypeOf<server.InboxItem>();
expectTypeOf<client.CompactionResult>().toEqualTypeOf<server.CompactionResult>();

// A memory: every top-level field, exactly. Its metadata: each field the client names has the
// server's type and optionality; the many internal ones it does not name it reads as unknown.
expectTypeOf<Omit<client.Memory, "metadata">>().toEqualTypeOf<Omit<WireMemory, "metadata">>();
expectTypeOf<Pick<server.MemoryMetadata, Named<ClientMetadata>>>().toEqualTypeOf<Pick<ClientMetadata, Named<ClientMetadata>>>();
expectTypeOf<server.MemoryMetadata>().toExtend<ClientMetadata>();

expectTypeOf<Omit<client.MemoryDetail, "memory">>().toEqualTypeOf<Omit<MemoryDetail, "memory">>();
expectTypeOf<Omit<client.RevertResult, "memory">>().toEqualTypeOf<Omit<RevertResult, "memory">>();

// What the client sends: each input type is exactly what the route's schema accepts
// (core/adapters/http/schemas.ts), so a field the service adds or renames breaks the build here.
expectTypeOf<client.ModelRef>().toEqualTypeOf<z.input<typeof http.ModelRef>>();
expectTypeOf<client.PromptSize>().toEqualTypeOf<z.input<typeof http.PromptSize>>();
expectTypeOf<client.UpsertProcessInput>().toEqualTypeOf<z.input<typeof http.PutProcessBody>>();
expectTypeOf<client.AppendMessageInput>().toEqualTypeOf<z.input<typeof http.AppendMessageBody>>();
expectTypeOf<client.CompactInput>().toEqualTypeOf<z.input<typeof http.CompactionBody>>();
expectTypeOf<client.CompactRangeInput>().toEqualTypeOf<z.input<typeof http.RangeCompactionBody>>();
expectTypeOf<client.BeginTurnInput>().toEqualTypeOf<z.input<typeof http.TurnBody>>();
