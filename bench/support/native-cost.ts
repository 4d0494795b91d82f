/**
 * The native-content benchmark's cost sessions (docs/benchmarks.md, "Native content"): the
 * hot-path fixture's active set as text only, with native content (Anthropic thinking, OpenAI
 * reasoning) and with screenshots in blobs, and one measured turn on any of them.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { messageSk } from "../../core/adapters/dynamodb/keys.js";
import { setStoredNative, type Message } from "../../core/domain/model.js";
import { projectMessage } from "../../core/domain/native/message-input.js";
import type { NativeContent, NativeFormat } from "../../core/domain/native/formats.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import { keepNative } from "../../core/services/native-content.js";
import { runTurn } from "../../core/services/turn.js";
import { madeUpSignature } from "./agent-sessions.js";
import { priceWrites, type BenchTable } from "./dynamo.js";
import { ACTIVE_MESSAGES, CONTEXT_WINDOW, seedProcess, USER_CHARS, type Fixture } from "./hot-path-fixture.js";
import { kb, requestElements, wire, type Wiring } from "./native-replay.js";
import { prng, syntheticText } from "./service.js";
import { fmt, median, ms, percentile, sum } from "./stats.js";

export const SCREENSHOTS = 5;
/** Characters of base64 per screenshot. */
export const SCREENSHOT_CHARS = 300 * 1024;

export type Variant = "text" | "anthropic" | "openai-responses" | "anthropic+blobs" | "anthropic+blobs (folder)";

export interface CostSession {
  variant: Variant;
  label: string;
  format?: NativeFormat;
  fx: Fixture;
  wiring: Wiring;
  blobs: BlobStore;
  storedBytes: number;
  blobCount: number;
}

export interface TurnSample {
  ms: number;
  roundTrips: number;
  rcu: number;
  wcu: number;
  items: number;
  avRcu: number;
  blobGets: number;
  blobBytes: number;
  blobMs: number;
  /** The DynamoDB commands, in order. */
  calls: string;
}

/** The native content the engine would have sent for a fixture message (thinking or reasoning on every assistant turn). */
function nativeFor(variant: Variant, m: Message, index: number, rand: () => number): NativeContent | undefined {
  if (variant === "text") return undefined;
  const reasoning = syntheticText(rand, 600 + Math.floor(rand() * 600));
  if (variant === "openai-responses") {
    return m.role === "USER"
      ? { format: "openai-responses", content: [{ type: "message", role: "user", content: [{ type: "input_text", text: m.content }] }] }
      : {
          format: "openai-responses",
          content: [
            { type: "reasoning", id: `rs_${index}`, summary: [{ type: "summary_text", text: reasoning.slice(0, 120) }], encrypted_content: `gAAAAA${madeUpSignature(rand, 900 + Math.floor(rand() * 1800))}` },
            { type: "message", id: `msg_${index}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content, annotations: [] }] },
          ],
        };
  }
  if (m.role === "ASSISTANT") {
    return {
      format: "anthropic",
      content: [
        { type: "thinking", thinking: reasoning, signature: madeUpSignature(rand, 768 + Math.floor(rand() * 1536)) },
        { type: "text", text: m.content },
      ],
    };
  }
  const blobs = variant !== "anthropic" && index % 8 === 0 && index / 8 < SCREENSHOTS;
  return {
    format: "anthropic",
    content: [
      ...(blobs ? [{ type: "image", source: { type: "base64", media_type: "image/png", data: madeUpSignature(rand, (SCREENSHOT_CHARS / 4) * 3) } }] : []),
      { type: "text", text: m.content },
    ],
  };
}

export async function costSession(t: BenchTable, variant: Variant, label: string, blobs: BlobStore): Promise<CostSession> {
  const wiring = wire(t, blobs);
  const rand = prng(4242);
  let storedBytes = 0;
  let blobCount = 0;
  const fx = await seedProcess(t, 0, undefined, {
    processId: `native-${variant.replace(/[^a-z]+/g, "-").replace(/-$/, "")}`,
    async activeMessage(key, m, i) {
      const native = nativeFor(variant, m, i, rand);
      if (!native) return m;
      // The message as the append would keep it: projection, tokens, blobs put through the service.
      const projected = projectMessage({ role: m.role, native });
      if (!projected.ok) throw new Error(`fixture message ${i}: ${JSON.stringify(projected.problems)}`);
      const stored = await keepNative(wiring.deps, key, native);
      storedBytes += Buffer.byteLength(JSON.stringify(stored), "utf8");
      blobCount += stored.blobs?.length ?? 0;
      return setStoredNative({ ...m, content: projected.message.content, tokens: projected.message.tokens }, stored);
    },
  });
  const format = variant === "text" ? undefined : variant === "openai-responses" ? "openai-responses" : "anthropic";
  return { variant, label, ...(format ? { format } : {}), fx, wiring, blobs, storedBytes, blobCount };
}

const probeText = syntheticText(prng(99), USER_CHARS);

function probeFor(s: CostSession) {
  if (s.format === "anthropic") return { role: "USER" as const, content: probeText, native: { format: "anthropic" as const, content: [{ type: "text", text: probeText }] } };
  if (s.format === "openai-responses") {
    return { role: "USER" as const, content: probeText, native: { format: "openai-responses" as const, content: [{ type: "message", role: "user", content: [{ type: "input_text", text: probeText }] }] } };
  }
  return { role: "USER" as const, content: probeText };
}

/** One measured turn on `wiring` (the session's own container, or a fresh one), its probe removed afterwards. */
export async function measureTurn(t: BenchTable, s: CostSession, wiring: Wiring): Promise<TurnSample> {
  const before = t.recorder.records.length;
  const views = wiring.activeViews.length;
  const gets = { n: wiring.counts.gets, bytes: wiring.counts.getBytes, ms: wiring.counts.getMs };
  const start = performance.now();
  const result = await runTurn(wiring.deps, s.fx.key, {
    model: { contextWindow: CONTEXT_WINDOW },
    message: probeFor(s),
    ...(s.format ? { format: s.format } : {}),
  });
  const elapsed = performance.now() - start;
  const records = t.recorder.records.slice(before);
  const view = wiring.activeViews[views];
  if (result.compaction.mode !== "NONE" || !view) throw new Error(`native-content: ${s.label} turn was not a plain turn (mode ${result.compaction.mode})`);
  if (result.messages.length !== ACTIVE_MESSAGES + 1) throw new Error(`native-content: ${s.label} active set has ${result.messages.length} messages`);
  if (s.format && requestElements(s.format, result.request).length === 0) throw new Error(`native-content: ${s.label} turn answered no request`);
  const appended = result.messages[result.messages.length - 1]!;
  await t.recorder.quietly(() => t.client.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: s.fx.pk, sk: messageSk(appended.id) } })));
  return {
    ms: elapsed,
    roundTrips: records.length,
    rcu: sum(records.filter((r) => !r.write).map((r) => r.capacity)),
    wcu: priceWrites(records, () => s.fx.metaBytes).total,
    items: view.itemsRead,
    avRcu: view.consumedCapacity,
    blobGets: wiring.counts.gets - gets.n,
    blobBytes: wiring.counts.getBytes - gets.bytes,
    blobMs: wiring.counts.getMs - gets.ms,
    calls: records.map((r) => r.name).join(", "),
  };
}

function mostCommon(values: readonly string[]): string {
  const n = new Map<string, number>();
  for (const v of values) n.set(v, (n.get(v) ?? 0) + 1);
  return [...n].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "";
}

export function costRow(s: CostSession, samples: TurnSample[]): string[] {
  const m = (f: (x: TurnSample) => number) => median(samples.map(f));
  return [
    s.label,
    fmt(m((x) => x.roundTrips)),
    fmt(m((x) => x.items)),
    fmt(m((x) => x.rcu), 1),
    fmt(m((x) => x.wcu)),
    fmt(m((x) => x.blobGets)),
    kb(m((x) => x.blobBytes)),
    `${ms(m((x) => x.ms))} / ${ms(percentile(samples.map((x) => x.ms), 95))}`,
    ms(m((x) => x.blobMs)),
    mostCommon(samples.map((x) => x.calls)),
  ];
}

