/**
 * The npm client's wire types (client/types.ts) against the types openapi-typescript generates from
 * docs/openapi.json (test/types/openapi.d.ts): what each method sends and what it reads back are
 * the document's, so the routes (whose schemas make the document), the document and the client
 * cannot drift apart. Each comparison is an equality both ways. Checked by `tsc -p tsconfig.json`
 * and, inside `npm test`, by test/unit/type-checks.test.ts. Nothing here runs.
 */
import { expectTypeOf } from "vitest";
import type * as client from "../../client/index.js";
import type { components, operations } from "./openapi.js";

type Op = operations;
type Schemas = components["schemas"];
/** The JSON body of the operation's answer with status `S`. */
type Answer<K extends keyof Op, S extends keyof Op[K]["responses"]> = Op[K]["responses"][S] extends { content: { "application/json": infer B } } ? B : never;
/** The JSON body the operation takes. */
type Sent<K extends keyof Op> = NonNullable<Op[K]["requestBody"]> extends { content: { "application/json": infer B } } ? B : never;
/** The names of the operation's query parameters. */
type QueryNames<K extends keyof Op> = keyof NonNullable<Op[K]["parameters"]["query"]>;
type Method<K extends keyof client.MemoryClient> = client.MemoryClient[K];
type Returned<K extends keyof client.MemoryClient> = Awaited<ReturnType<Method<K>>>;
type QueryKeys<K extends keyof client.MemoryClient, I extends number> = keyof NonNullable<Parameters<Method<K>>[I]>;
/** The keys a type names, without its index signature. */
type Named<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
type ClientMetadata = client.Memory["metadata"];
/** A memory as listed and read: the stored one less its detail fields (`withoutDetail` in core/services/memories.ts). */
type WireMemory = Schemas["ListedMemory"];
type DetailOnly = "citations" | "droppedUnits" | "keepUnits" | "ledger";

// ------------------------------------------------------------------ the shapes
expectTypeOf<client.Message>().toEqualTypeOf<Schemas["Message"]>();
expectTypeOf<client.Process>().toEqualTypeOf<Answer<"getProcess", 200>["process"]>();
expectTypeOf<client.InboxItem>().toEqualTypeOf<Answer<"answerInboxItem", 200>["item"]>();
expectTypeOf<client.CompactionResult>().toEqualTypeOf<Answer<"runTurn", 200>["compaction"]>();
expectTypeOf<client.MemoryContext>().toEqualTypeOf<Answer<"getContext", 200>>();
// A memory: every top-level field exactly; of its metadata, each field the client names has the
// document's type and optionality, and the document's other fields are ones the client reads as unknown.
expectTypeOf<Omit<client.Memory, "metadata">>().toEqualTypeOf<Omit<WireMemory, "metadata">>();
expectTypeOf<Pick<WireMemory["metadata"], Named<ClientMetadata>>>().toEqualTypeOf<Pick<ClientMetadata, Named<ClientMetadata>>>();
expectTypeOf<WireMemory["metadata"]>().toExtend<ClientMetadata>();

// ------------------------------------------------------------------ each method: what it sends, what it reads
expectTypeOf<Parameters<Method<"beginTurn">>[1]>().toEqualTypeOf<Sent<"runTurn">>();
expectTypeOf<Returned<"beginTurn">>().toEqualTypeOf<Answer<"runTurn", 200>>();
expectTypeOf<Parameters<Method<"upsertProcess">>[1]>().toEqualTypeOf<Sent<"upsertProcess">>();
expectTypeOf<Returned<"upsertProcess">>().toEqualTypeOf<Answer<"upsertProcess", 200>["process"]>();
expectTypeOf<Returned<"getProcess">>().toEqualTypeOf<Answer<"getProcess", 200>["process"]>();
// 202 is `{ status: "deleting" }`, 204 (no body) the client's `deleted`.
expectTypeOf<Answer<"deleteProcess", 202>["status"]>().toEqualTypeOf<"deleting">();
expectTypeOf<Op["deleteProcess"]["responses"][204]["content"]>().toEqualTypeOf<never | undefined>();
expectTypeOf<Returned<"listProcesses">>().toEqualTypeOf<Answer<"listProcesses", 200>>();
expectTypeOf<QueryKeys<"listProcesses", 0>>().toEqualTypeOf<QueryNames<"listProcesses">>();
// The client follows the export's cursor itself, page after page.
expectTypeOf<QueryNames<"exportProcess">>().toEqualTypeOf<"cursor">();
expectTypeOf<Returned<"importProcess">>().toEqualTypeOf<Answer<"importProcess", 201>>();
expectTypeOf<Exclude<QueryKeys<"importProcess", 2>, keyof client.RequestOptions>>().toEqualTypeOf<QueryNames<"importProcess">>();
expectTypeOf<Parameters<Method<"appendMessage">>[1]>().toEqualTypeOf<Sent<"appendMessage">>();
expectTypeOf<Returned<"appendMessage">["message"]>().toEqualTypeOf<Answer<"appendMessage", 201>["message"]>();
expectTypeOf<Answer<"appendMessage", 200>>().toEqualTypeOf<Answer<"appendMessage", 201>>();
expectTypeOf<Returned<"listMessages">>().toEqualTypeOf<Answer<"listMessages", 200>>();
expectTypeOf<QueryKeys<"listMessages", 1>>().toEqualTypeOf<QueryNames<"listMessages">>();
expectTypeOf<Returned<"getMessage">>().toEqualTypeOf<Answer<"getMessage", 200>["message"]>();
expectTypeOf<Parameters<Method<"setMessageStrength">>[2]>().toEqualTypeOf<Sent<"setMessageStrength">["strength"]>();
expectTypeOf<Returned<"setMessageStrength">>().toEqualTypeOf<Answer<"setMessageStrength", 200>["message"]>();
expectTypeOf<Parameters<Method<"compact">>[1]>().toEqualTypeOf<Sent<"compact">>();
expectTypeOf<Returned<"compact">>().toEqualTypeOf<Answer<"compact", 200>>();
expectTypeOf<Returned<"compact">>().toEqualTypeOf<Answer<"compact", 202>>();
expectTypeOf<Parameters<Method<"compactRange">>[1]>().toEqualTypeOf<Sent<"compactRange">>();
expectTypeOf<Returned<"compactRange">>().toEqualTypeOf<Answer<"compactRange", 200>>();
expectTypeOf<Returned<"getContext">>().toEqualTypeOf<Answer<"getContext", 200>>();
expectTypeOf<QueryKeys<"getContext", 1>>().toEqualTypeOf<QueryNames<"getContext">>();
expectTypeOf<Returned<"listMemories">>().toEqualTypeOf<{ items: client.Memory[] }>();
expectTypeOf<QueryKeys<"listMemories", 1>>().toEqualTypeOf<QueryNames<"listMemories">>();
expectTypeOf<Answer<"listMemories", 200>["items"][number]>().toEqualTypeOf<WireMemory>();
expectTypeOf<Omit<Answer<"getMemory", 200>, "memory">>().toEqualTypeOf<Omit<client.MemoryDetail, "memory">>();
expectTypeOf<Answer<"getMemory", 200>["memory"]>().toEqualTypeOf<WireMemory>();
// A revert answers the stored memory: the listed one plus the detail fields the client does not read.
expectTypeOf<Omit<Returned<"revertMemory">, "memory">>().toEqualTypeOf<Omit<Answer<"revertMemory", 200>, "memory">>();
expectTypeOf<Omit<Answer<"revertMemory", 200>["memory"], DetailOnly>>().toEqualTypeOf<WireMemory>();
expectTypeOf<Returned<"searchHistory">>().toEqualTypeOf<Answer<"searchHistory", 200>>();
expectTypeOf<QueryKeys<"searchHistory", 1>>().toEqualTypeOf<QueryNames<"searchHistory">>();
expectTypeOf<Returned<"listInbox">>().toEqualTypeOf<Answer<"listInbox", 200>>();
expectTypeOf<QueryKeys<"listInbox", 0>>().toEqualTypeOf<QueryNames<"listInbox">>();
expectTypeOf<Parameters<Method<"answerInboxItem">>[1]>().toEqualTypeOf<Sent<"answerInboxItem">>();
expectTypeOf<Returned<"answerInboxItem">>().toEqualTypeOf<Answer<"answerInboxItem", 200>["item"]>();
expectTypeOf<Returned<"getMemory">>().toEqualTypeOf<client.MemoryDetail>();
expectTypeOf<Omit<Returned<"getMemorySources">, "memory">>().toEqualTypeOf<Omit<Answer<"getMemorySources", 200>, "memory">>();
// Like a revert, the sources answer the stored memory, detail fields included.
expectTypeOf<Omit<Answer<"getMemorySources", 200>["memory"], DetailOnly>>().toEqualTypeOf<WireMemory>();
expectTypeOf<Returned<"getSettings">>().toEqualTypeOf<Answer<"getSettings", 200>>();
expectTypeOf<QueryKeys<"getSettings", 0>>().toEqualTypeOf<QueryNames<"getSettings">>();
expectTypeOf<Parameters<Method<"updateSettings">>[0]>().toEqualTypeOf<Sent<"putSettings">>();
expectTypeOf<Returned<"updateSettings">>().toEqualTypeOf<Answer<"putSettings", 200>>();
expectTypeOf<QueryKeys<"updateSettings", 1>>().toEqualTypeOf<QueryNames<"putSettings">>();
expectTypeOf<Returned<"health">>().toEqualTypeOf<Answer<"health", 200>>();

/**
 * The operation each method calls: a method added to the client fails here until it is mapped
 * (and compared above), and a renamed or removed operation fails too.
 */
interface OperationOf {
  beginTurn: "runTurn";
  upsertProcess: "upsertProcess";
  getProcess: "getProcess";
  deleteProcess: "deleteProcess";
  exportProcess: "exportProcess";
  importProcess: "importProcess";
  listProcesses: "listProcesses";
  appendMessage: "appendMessage";
  listMessages: "listMessages";
  getMessage: "getMessage";
  setMessageStrength: "setMessageStrength";
  compact: "compact";
  compactRange: "compactRange";
  getContext: "getContext";
  listMemories: "listMemories";
  revertMemory: "revertMemory";
  searchHistory: "searchHistory";
  listInbox: "listInbox";
  answerInboxItem: "answerInboxItem";
  getMemory: "getMemory";
  getMemorySources: "getMemorySources";
  getSettings: "getSettings";
  updateSettings: "putSettings";
  health: "health";
  getOpenApiDocument: "getOpenApiDocument";
}
expectTypeOf<keyof OperationOf>().toEqualTypeOf<keyof client.MemoryClient>();
expectTypeOf<OperationOf[keyof OperationOf]>().toExtend<keyof Op>();
