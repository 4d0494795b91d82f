/**
 * The native-content benchmark's replay of a real session (docs/benchmarks.md, "Native content"):
 * every message appended as POST .../messages parses it, then one turn in a fresh container asks
 * for the request in the session's format; what came back is compared with what was sent.
 */
import { isDeepStrictEqual } from "node:util";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { createCachedBlobReader } from "../../core/services/blob-reader.js";
import { zodToAppError } from "../../core/adapters/http/errors.js";
import { AppendMessageBody, MAX_MESSAGE_BODY_BYTES } from "../../core/adapters/http/schemas.js";
import type { NativeContent, NativeFormat } from "../../core/domain/native/formats.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { runTurn } from "../../core/services/turn.js";
import type { AgentSession } from "./agent-sessions.js";
import { countedBlobStore, type BlobCounts } from "./blob-stores.js";
import type { BenchTable } from "./dynamo.js";
import { benchDeps, observedStore, type ActiveViewObservation } from "./service.js";
import { fmt, sum } from "./stats.js";

/** A window no real session reaches: nothing folds, clears or trims, so the request holds every message. */
export const WIDE_WINDOW = 5_000_000;

export const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`;

export interface Wiring {
  deps: ServiceDeps;
  activeViews: ActiveViewObservation[];
  counts: BlobCounts;
}

/** A container's services over the section's table and `blobs` (every get and put counted). */

/** A container's services over the section's table and `blobs` (every get and put counted). */
export function wire(t: BenchTable, blobs: BlobStore): Wiring {
  const { store, activeViews } = observedStore(t);
  const counted = countedBlobStore(blobs);
  // A container reads each blob once (the cached reader); a new wiring is a new, cold container.
  return { deps: { ...benchDeps({ store }), blobs: counted.store, blobReader: createCachedBlobReader(counted.store) }, activeViews, counts: counted.counts };
}

// ------------------------------------------------------------------------ 1. real sessions, exactly

export interface FidelityRow {
  session: string;
  format: NativeFormat;
  messages: number;
  accepted: number;
  refused: Array<{ index: number; error: string }>;
  roleMismatches: number;
  answerMismatches: number;
  replayMismatches: number;
  requestElements: number;
  comparedElements: number;
  requestMismatches: number;
  headElements: number;
  withBlobs: number;
  blobsPut: number;
  blobBytes: number;
  largestBytes: number;
  largestType: string;
  totalBytes: number;
  compaction: string;
  turn: { ms: number; roundTrips: number; rcu: number; items: number; blobGets: number; blobGetBytes: number };
}

/** What the request carries for one stored message, in the shape the format's request gives it. */
function expectedElements(format: NativeFormat, sent: readonly { native: NativeContent; role: string }[]): unknown[] {
  if (format === "openai-responses") return sent.flatMap((m) => m.native.content);
  return sent.map((m) => ({ role: m.role === "ASSISTANT" ? "assistant" : "user", content: m.native.content }));
}

export function requestElements(format: NativeFormat, request: unknown): unknown[] {
  const r = request as Record<string, unknown[]>;
  return (format === "openai-responses" ? r.input : r.messages) ?? [];
}

export async function replaySession(t: BenchTable, session: AgentSession, n: number): Promise<FidelityRow> {
  const blobs = createMemoryBlobStore();
  const { deps, counts } = wire(t, blobs);
  const key: ProcessKey = { tenantId: "bench", processId: `native-real-${n}` };
  await t.recorder.quietly(() => deps.store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "bench" }, deps.clock.now().toISOString()));
  const row: FidelityRow = {
    session: session.name,
    format: session.format,
    messages: session.messages.length,
    accepted: 0,
    refused: [],
    roleMismatches: 0,
    answerMismatches: 0,
    replayMismatches: 0,
    requestElements: 0,
    comparedElements: 0,
    requestMismatches: 0,
    headElements: 0,
    withBlobs: 0,
    blobsPut: 0,
    blobBytes: 0,
    largestBytes: 0,
    largestType: "",
    totalBytes: 0,
    compaction: "",
    turn: { ms: 0, roundTrips: 0, rcu: 0, items: 0, blobGets: 0, blobGetBytes: 0 },
  };
  const sent: Array<{ native: NativeContent; role: string }> = [];
  for (const [index, m] of session.messages.entries()) {
    const body = { ...(m.role ? { role: m.role } : {}), native: m.native };
    const bytes = Buffer.byteLength(JSON.stringify(body), "utf8");
    row.totalBytes += bytes;
    if (bytes > row.largestBytes) {
      row.largestBytes = bytes;
      row.largestType = [...new Set((m.native.content as Array<Record<string, unknown>>).map((e) => String(e.type ?? "message")))].join("+");
    }
    // What POST .../messages does with the body: the size limit, the schema with the projection, the append.
    if (bytes > MAX_MESSAGE_BODY_BYTES) {
      row.refused.push({ index, error: `body of ${bytes} bytes is past ${MAX_MESSAGE_BODY_BYTES}` });
      continue;
    }
    const parsed = AppendMessageBody.safeParse(body);
    if (!parsed.success) {
      const e = zodToAppError(parsed.error, "body");
      row.refused.push({ index, error: `${e.code}: ${e.message} ${JSON.stringify(e.details ?? {})}` });
      continue;
    }
    const puts = counts.puts;
    try {
      const { message } = await t.recorder.quietly(() => appendMessage(deps, key, parsed.data));
      row.accepted++;
      if (counts.puts > puts) row.withBlobs++;
      if (message.role !== m.expectedRole) row.roleMismatches++;
      if (!isDeepStrictEqual(message.native, m.native)) row.answerMismatches++;
      sent.push({ native: m.native, role: message.role });
    } catch (e) {
      row.refused.push({ index, error: e instanceof Error ? e.message : String(e) });
    }
  }
  row.blobsPut = counts.puts;
  row.blobBytes = counts.putBytes;

  // A fresh container asks for the turn: every blob is read from the store.
  const cold = wire(t, blobs);
  const before = t.recorder.records.length;
  const start = performance.now();
  const result = await runTurn(cold.deps, key, { model: { contextWindow: WIDE_WINDOW }, format: session.format });
  row.turn.ms = performance.now() - start;
  const records = t.recorder.records.slice(before);
  row.turn.roundTrips = records.length;
  row.turn.rcu = sum(records.filter((r) => !r.write).map((r) => r.capacity));
  row.turn.items = cold.activeViews[0]?.itemsRead ?? Number.NaN;
  row.turn.blobGets = cold.counts.gets;
  row.turn.blobGetBytes = cold.counts.getBytes;
  row.compaction = `${result.compaction.mode}${result.compaction.trimmed ? ", trimmed" : ""}`;

  // The request: the memory block first (developer items / none), then every stored element exactly.
  const expected = expectedElements(session.format, sent);
  const got = requestElements(session.format, result.request);
  row.requestElements = got.length;
  row.headElements = Math.max(0, got.length - expected.length);
  const tail = got.slice(row.headElements);
  row.comparedElements = expected.length;
  for (let i = 0; i < Math.max(expected.length, tail.length); i++) if (!isDeepStrictEqual(tail[i], expected[i])) row.requestMismatches++;
  // The turn's messages carry the same native content.
  const natives = result.messages.filter((m) => m.native);
  for (let i = 0; i < Math.max(natives.length, sent.length); i++) if (!isDeepStrictEqual(natives[i]?.native, sent[i]?.native)) row.replayMismatches++;
  return row;
}

