/**
 * Native content (docs/benchmarks.md, "Native content"), against DynamoDB Local:
 *
 * 1. Real agent sessions in their own format (bench/support/agent-sessions.ts): every message is
 *    appended through the real service with its native content, as the route parses it, then one
 *    turn asks for the request in that format with a window nothing folds in. The request must
 *    carry every stored item exactly, in order; nothing may be refused.
 * 2. What a turn costs with native content: the hot-path fixture's active set as text only, the
 *    same messages with native content (Anthropic thinking, OpenAI reasoning), and with five
 *    screenshots in blobs (memory and folder stores), side by side: round trips, items, RCU, blob
 *    gets and latency, for the first turn of a fresh container and for warm turns; and the
 *    hot-path section's own figures from the same run beside them.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * Command: `AGENT_SESSIONS_DIR=<folder> npm run bench -- --only native-content` (in the default run;
 * `BENCH_NATIVE_RUNS` sets the warm repetitions, 30 by default, 10 with `--quick`, 60 with
 * `--full`). The folder holds real coding-agent sessions in the layout `codex-rollout/*.jsonl` and
 * `specstory/*.md`. Like the LoCoMo data they are never in the repository (the default folder,
 * `data/agent-sessions/`, is git-ignored) and `npm test` never reads them. Without them the section
 * says so and measures only the cost tables. `bench/support/agent-sessions.ts` reads them:
 *
 * - **A Codex CLI rollout** becomes the Responses API items it recorded (`response_item` lines only),
 *   unchanged. The items of one model response (`reasoning`, assistant `message`, `function_call`,
 *   `custom_tool_call`, and any other item the model produced, such as Codex's `ghost_snapshot`) make
 *   one ASSISTANT message. Each `function_call_output` or `custom_tool_call_output` is one TOOL
 *   message. The consecutive user input messages of a turn make one USER message (developer ones a
 *   SYSTEM message). No role is sent: the service derives it from the items.
 * - **A Claude Code SpecStory transcript** becomes an Anthropic session. A user turn is a user
 *   message. The agent's thought processes, text and tool uses run into one assistant message until
 *   a tool use ends it, and that tool's result is the next message (all `tool_result`: TOOL). The
 *   transcript keeps no thinking signatures, so each thinking block gets a made-up one of 1-3 KB of
 *   base64, the size of Anthropic's. Only messages of text alone name their role.
 *
 * **What it does.**
 *
 * 1. **Real sessions, exactly.** Each message goes through what `POST .../messages` does: the 5 MiB
 *    body limit, the route's body schema (the native checks and the projection), then
 *    `appendMessage` on the DynamoDB store with an in-memory blob store
 *    (`core/adapters/blobs/memory-blob-store.ts`). Then one turn runs in a fresh container. It asks
 *    for `format` (the session's own) with a 5,000,000-token window, so nothing folds, clears or
 *    trims. The check is element by element with `isDeepStrictEqual`:
 *    - the tail of `request.input` (OpenAI) against the sent items, concatenated;
 *    - the tail of `request.messages` (Anthropic) against `{ role, content }` of each sent message;
 *    - each append's answer and each of the turn's `messages` against the `native` that was sent.
 *
 *    Only the memory block may come before that tail: OpenAI developer items (Anthropic puts it in
 *    `system`). There were none, since nothing has been folded.
 * 2. **What a turn costs.** Five processes share one table. Each has the hot-path fixture's active
 *    set (META, one summary, 40 messages: USER ~250 chars, ASSISTANT ~900 chars, seeded from the
 *    store's item builders):
 *    - text only: the fixture as it is;
 *    - Anthropic: each ASSISTANT message also carries a thinking block (600-1,200 chars, signature
 *      1-3 KB) beside its text;
 *    - OpenAI Responses: each ASSISTANT message carries a reasoning item (`encrypted_content`
 *      1.2-3.6 KB) and an assistant message item;
 *    - Anthropic plus 5 screenshots of 300 KB base64, on USER messages, once with the in-memory blob
 *      store and once with a folder on the local disk (`bench/support/blob-stores.ts`).
 *
 *    The native content goes in through the service's `keepNative`, so it is stored as an append
 *    stores it. A turn appends a 250-char USER probe (native in the native sessions) and asks for
 *    the request in the session's format. The text-only session names no format, as in the hot path.
 *    The window is 200k. The probe is deleted after each turn, outside the timing. "Cold" is the
 *    first turn of a fresh container: the services are built again, so their caches are empty.
 *    "Warm" is that container's next turns, with the sessions interleaved in rotating order. The
 *    hot-path section itself (`bench/hot-path.ts`, 0 and 1,000 archived) runs in the same run, and
 *    its figures are printed beside these.
 *
 * Round trips, items and RCU come from DynamoDB Local (ReturnConsumedCapacity). WCU is priced from
 * item sizes with AWS's rules, as in the hot path. Blob gets and their bytes are the service's own
 * calls to the blob store.
 *
 * The latencies are DynamoDB Local's under the machine's load; the counts and units carry over.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createMemoryBlobStore } from "../core/adapters/blobs/memory-blob-store.js";
import { runHotPath } from "./hot-path.js";
import { agentSessionsDir, loadAgentSessions } from "./support/agent-sessions.js";
import { createDirectoryBlobStore } from "../core/adapters/blobs/directory-blob-store.js";
import { type BenchContext, bySize, envInt, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import { CONTEXT_WINDOW, USER_CHARS } from "./support/hot-path-fixture.js";
import { costRow, costSession, measureTurn, SCREENSHOT_CHARS, SCREENSHOTS, type CostSession, type TurnSample, type Variant } from "./support/native-cost.js";
import { kb, replaySession, WIDE_WINDOW, wire, type FidelityRow } from "./support/native-replay.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { fmt, median, ms, sum } from "./support/stats.js";

const COLD_RUNS = 5;

// -------------------------------------------------------------------------------------- the section

export async function runNativeContent(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const t = await freshTable(endpoint, "native");
  const tables: Table[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];

  // 1. Real sessions.
  const found = loadAgentSessions();
  const sessions = [...found.codex, ...found.anthropic.slice(0, 1)];
  const fidelity: FidelityRow[] = [];
  for (const [i, session] of sessions.entries()) {
    const start = performance.now();
    fidelity.push(await replaySession(t, session, i));
    ctx.log(`native-content: ${session.name}: ${session.messages.length} messages in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  }
  for (const r of fidelity) for (const f of r.refused) console.error(`[bench] native-content: ${r.session} message ${f.index} refused: ${f.error}`);
  if (fidelity.length > 0) {
    tables.push({
      title: `Real sessions in their native format: every message appended as POST .../messages parses it, then one turn with format and a ${fmt(WIDE_WINDOW)}-token window`,
      columns: ["session", "format", "messages in", "refused", "role derived wrong", "request elements", "of them the memory block", "elements not JSON-equal", "answers / turn messages not equal", "messages with blobs", "blobs put", "largest message", "session size"],
      rows: fidelity.map((r) => [
        r.session.replace(/__.*?__/, " ").slice(0, 48),
        r.format + (r.format === "anthropic" ? " (made-up signatures)" : ""),
        fmt(r.messages),
        fmt(r.refused.length),
        fmt(r.roleMismatches),
        fmt(r.requestElements),
        fmt(r.headElements),
        fmt(r.requestMismatches),
        `${fmt(r.answerMismatches)} / ${fmt(r.replayMismatches)}`,
        `${fmt(r.withBlobs)} (${fmt((100 * r.withBlobs) / Math.max(1, r.accepted), 1)}%)`,
        `${fmt(r.blobsPut)} (${kb(r.blobBytes)})`,
        `${kb(r.largestBytes)} (${r.largestType})`,
        kb(r.totalBytes),
      ]),
    });
    tables.push({
      title: "The turn over the whole session, in a fresh container (every blob read from the store)",
      columns: ["session", "compaction", "round trips", "items read", "RCU", "blob gets", "blob bytes", "latency"],
      rows: fidelity.map((r) => [
        r.session.replace(/__.*?__/, " ").slice(0, 48),
        r.compaction,
        fmt(r.turn.roundTrips),
        fmt(r.turn.items),
        fmt(r.turn.rcu, 1),
        fmt(r.turn.blobGets),
        kb(r.turn.blobGetBytes),
        ms(r.turn.ms),
      ]),
    });
    const refused = sum(fidelity.map((r) => r.refused.length));
    const mismatches = sum(fidelity.map((r) => r.requestMismatches + r.answerMismatches + r.replayMismatches + r.roleMismatches));
    targets.push(
      { name: "real-session messages refused", target: "0", measured: fmt(refused), met: refused === 0 },
      { name: "request elements (and answers) not JSON-equal to what was sent", target: "0", measured: fmt(mismatches), met: mismatches === 0 },
    );
    notes.push(
      `Sessions from ${agentSessionsDir()} (AGENT_SESSIONS_DIR): ${found.codex.length} Codex rollout(s) replayed item for item as recorded; ${found.anthropic.length > 0 ? `the Claude Code SpecStory transcript ${found.anthropic[0]!.name} as Anthropic blocks, its thought processes as thinking blocks with made-up signatures of 1-3 KB` : "no Claude Code SpecStory transcript"}. Items and blocks by type: ${fidelity.map((r, i) => `${r.session.slice(0, 24)}: ${Object.entries(sessions[i]!.types).map(([k, v]) => `${k} ${v}`).join(", ")}`).join("; ")}.`,
    );
  } else {
    notes.push(`No agent sessions under ${agentSessionsDir()} (set AGENT_SESSIONS_DIR to the folder with codex-rollout/ and specstory/): the real-session tables were not measured.`);
  }

  // 2. Cost per turn, side by side.
  const runs = envInt("BENCH_NATIVE_RUNS", bySize(ctx, { quick: 10, normal: 30, full: 60 }));
  const memory = createMemoryBlobStore();
  const folder = mkdtempSync(path.join(tmpdir(), "bench-blobs-"));
  try {
    const cost: CostSession[] = [
      await costSession(t, "text", "text only (the hot-path fixture)", memory),
      await costSession(t, "anthropic", "anthropic: thinking + text", memory),
      await costSession(t, "openai-responses", "openai-responses: reasoning + message", memory),
      await costSession(t, "anthropic+blobs", `anthropic + ${SCREENSHOTS} screenshots, memory blob store`, memory),
      await costSession(t, "anthropic+blobs (folder)", `anthropic + ${SCREENSHOTS} screenshots, folder blob store`, createDirectoryBlobStore({ root: folder })),
    ];
    ctx.log(`native-content: seeded ${cost.length} cost sessions`);
    // Cold: the first turn of a fresh container (new services: empty caches), each session in turn.
    const cold = new Map<Variant, TurnSample[]>(cost.map((s) => [s.variant, []]));
    const warm = new Map<Variant, TurnSample[]>(cost.map((s) => [s.variant, []]));
    for (let i = 0; i < 2; i++) for (const s of cost) await measureTurn(t, s, s.wiring); // JIT and connections
    for (let round = 0; round < COLD_RUNS; round++) for (const s of cost) cold.get(s.variant)!.push(await measureTurn(t, s, wire(t, s.blobs)));
    for (let i = 0; i < 3; i++) for (const s of cost) await measureTurn(t, s, s.wiring);
    for (let round = 0; round < runs; round++) {
      const order = cost.map((_, i) => cost[(i + round) % cost.length]!);
      for (const s of order) warm.get(s.variant)!.push(await measureTurn(t, s, s.wiring));
    }
    const columns = ["session", "round trips", "items read", "RCU", "WCU (priced)", "blob gets", "blob bytes", "latency median / p95", "blob get time", "DynamoDB calls"];
    tables.push({
      title: `Cost of a turn, cold: the first turn of a fresh container (new services), median of ${COLD_RUNS}`,
      columns,
      rows: cost.map((s) => costRow(s, cold.get(s.variant)!)),
    });
    tables.push({
      title: `Cost of a turn, warm: the same container's next turns, median of ${runs}`,
      columns,
      rows: cost.map((s) => costRow(s, warm.get(s.variant)!)),
    });
    const textWarm = warm.get("text")!;
    tables.push({
      title: "The active sets: META + 1 summary + 40 messages each",
      columns: ["session", "native content stored inline", "blobs", "activeView RCU", "latency vs text only (paired)"],
      rows: cost.map((s) => [
        s.label,
        kb(s.storedBytes),
        s.blobCount === 0 ? "0" : `${fmt(s.blobCount)} (${kb(SCREENSHOT_CHARS * s.blobCount)} + JSON quotes)`,
        fmt(median(warm.get(s.variant)!.map((x) => x.avRcu)), 1),
        `${fmt(median(warm.get(s.variant)!.map((x, i) => x.ms / textWarm[i]!.ms)), 2)}x`,
      ]),
    });
    const text = { rt: median(textWarm.map((x) => x.roundTrips)), rcu: median(textWarm.map((x) => x.rcu)) };
    targets.push({ name: "text-only turn: round trips and RCU (docs/benchmarks.md, \"Per-turn hot path\")", target: "2 and 9", measured: `${fmt(text.rt)} and ${fmt(text.rcu, 1)}`, met: text.rt === 2 && text.rcu === 9 });
    const nativeRt = Math.max(...cost.filter((s) => s.variant !== "text").map((s) => median(warm.get(s.variant)!.map((x) => x.roundTrips))));
    targets.push({ name: "native turn: DynamoDB round trips (warm)", target: "2, as text only", measured: fmt(nativeRt), met: nativeRt === 2 });

    // The hot-path section itself, in the same run, beside these.
    const sizes = process.env.BENCH_HOT_SIZES;
    process.env.BENCH_HOT_SIZES ??= "0,1000";
    let hot: SectionResult;
    try {
      hot = await runHotPath(ctx);
    } finally {
      if (sizes === undefined) delete process.env.BENCH_HOT_SIZES;
    }
    const hotTable = hot.tables[0]!;
    tables.push({ title: `bench/hot-path.ts in the same run (its own sizes and repetitions): ${hotTable.title}`, columns: hotTable.columns.slice(0, 7), rows: hotTable.rows.map((r) => r.slice(0, 7)) });

    notes.push(
      `Cost sessions: the hot-path fixture's active set (META, one summary, 40 messages: USER ~${USER_CHARS} chars, ASSISTANT ~900 chars) seeded from the store's item builders; the native ones carry on every ASSISTANT message a thinking block (600-1,200 chars, signature 1-3 KB) or a reasoning item (encrypted_content 1.2-3.6 KB) beside the same text, and the blob sessions put ${SCREENSHOTS} screenshots of ${fmt(SCREENSHOT_CHARS / 1024)} KB base64 on USER messages, through the service's keepNative. Each turn appends a ${USER_CHARS}-char USER probe (native in the native sessions), asks for the request in the session's format (text only: none, as in hot-path) with a ${fmt(CONTEXT_WINDOW)} window, and the probe is deleted outside the timing.`,
      "Round trips, items and RCU are DynamoDB's (ReturnConsumedCapacity from DynamoDB Local); writes are priced from item sizes. Blob gets are the service's calls to the blob store; the memory store costs nothing per get, the folder store one file read. 'Cold' builds the services again (createDeps: empty tunables, history and any per-container cache) before the turn.",
      "Blobs are read through the container's cache (core/services/blob-reader.ts): a blob never changes, so only a fresh container's first turn gets them from the store.",
    );
    return {
      id: "native-content",
      title: "Native content: real sessions replayed exactly, and what a turn costs (DynamoDB Local)",
      command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}AGENT_SESSIONS_DIR=<folder with codex-rollout/ and specstory/> npm run bench -- --only native-content`,
      tables,
      targets,
      notes,
      data: {
        fidelity,
        cold: Object.fromEntries(cold),
        warm: Object.fromEntries([...warm].map(([k, v]) => [k, { medianMs: median(v.map((x) => x.ms)), samples: v.length }])),
        hotPath: hot.data,
      },
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
