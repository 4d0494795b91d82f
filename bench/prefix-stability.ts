/**
 * Prefix stability (docs/benchmarks.md, "Prefix stability"): how often a turn's prompt is the
 * previous turn's plus what was appended, how many prefix changes a fold costs, and how much of
 * each request a provider's prompt cache could read; this tree's code ("after") side by side with
 * the code before append-only replay ("before") on the same sessions, in the same run.
 *
 * Method:
 * - Sessions: synthetic (the first built-in generated conversation, and the agent-loop section's
 *   seeded script of tool steps with 0.5-8 KB results: 120, quick 80, full 400), LoCoMo (`LOCOMO_DIR`, every conversation;
 *   skipped with a note when absent) and the agent sessions (`AGENT_SESSIONS_DIR`, read by
 *   bench/support/agent-transcripts.ts as agent-evidence reads them). Speaker A of a conversation
 *   is the USER, speaker B the ASSISTANT. The default run takes the first `BENCH_PREFIX_MESSAGES`
 *   (240) messages of each session, the quick run 160 of fewer sessions, `--full` every message.
 * - Replay: each message is appended through the service's `appendMessage`; before each ASSISTANT
 *   message that follows another role (an engine's turn), `runTurn` is asked for the prompt with
 *   `format: "anthropic"` and, as `query`, the newest USER text (recall on, as engines run it), at a
 *   32k and a 128k window, folds inline with the offline summarizer, default tunables. The same
 *   replay runs this tree's code and the code of `BENCH_PREFIX_BASELINE` (default 05e9b86, main
 *   before append-only replay), checked out in a temporary worktree (bench/support/service-code.ts).
 * - Requests: the turn's `request` (anthropic), the other formats built from the same answer by
 *   that code's own `replayRequest` (openai-responses, openai-chat, gemini, ai-sdk), and the plain
 *   answer (`context.block` and `messages`). Judged by tools/prefix-check.ts, which shares no code
 *   with the service: a turn kept the prefix when every format's request starts with the previous
 *   turn's, element for element.
 * - Turns: a fold turn committed a summary (`compaction.compacted`, or a new `summaryId`); an
 *   emergency turn trimmed the answer without one; every other turn after the first is quiet
 *   (target: all kept). Prefix changes per fold: the turns that broke the prefix, fold turns
 *   included and emergency turns not, per fold (target 1).
 * - Cache read share, per format: the emulated prompt cache holds the previous request and reads
 *   the leading segments the new one shares with it (each member besides the growing list, then
 *   each message or item, as JSON without `cache_control`; a changed segment and all after it are written anew),
 *   summed over the turns after the first, as characters read over characters sent. The provider
 *   emulator keeps no cache of its own, so this longest-common-prefix share stands in for it.
 * - Honesty of the answer: after-code turns whose `prefix.kept` is true while a format broke (target 0).
 */
import { pathToFileURL } from "node:url";
import path from "node:path";
import { AppendMessageBody } from "../core/adapters/http/schemas.js";
import type { ReplayFormat } from "../core/domain/native/formats.js";
import { plainPrompt, requestBreak, requestSegments, sharedPrefix } from "../tools/prefix-check.js";
import { agentScript } from "./agent-loop.js";
import { loadTranscripts, sentBody, type SentMessage } from "./support/agent-transcripts.js";
import { bySize, type BenchContext, envInt, envInts, repoRoot, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import { generatedConversations } from "./support/generated-conversation.js";
import { loadConversations, locomoDir, type LocomoConversation } from "./support/locomo.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { inlineSessionDeps, loadServiceCode, withCheckout, type ServiceCode } from "./support/service-code.js";
import { fmt, pct, sum } from "./support/stats.js";

const BASELINE = process.env.BENCH_PREFIX_BASELINE?.trim() || "05e9b86";
const FORMATS = ["plain", "anthropic", "openai-responses", "openai-chat", "gemini", "ai-sdk"] as const;
type Format = (typeof FORMATS)[number];
type ReplayRequestModule = typeof import("../core/domain/native/replay-request.js");

interface Session {
  dataset: "synthetic" | "LoCoMo" | "agent sessions";
  name: string;
  messages: SentMessage[];
}

/** One session through one code at one window. */
interface Run {
  dataset: Session["dataset"];
  session: string;
  code: string;
  window: number;
  turns: number;
  folds: number;
  emergency: number;
  quiet: number;
  quietKept: number;
  /** Turns that broke the prefix, emergency turns left out. */
  breaks: number;
  /** After-code turns that said `prefix.kept` while a format broke. */
  falseKept: number;
  /** Per format: characters the emulated cache read, and characters sent, over the turns after the first. */
  cache: Record<Format, { read: number; total: number }>;
  /** The first few quiet breaks: turn, format and where. */
  quietBreaks: string[];
}

const conversationMessages = (c: LocomoConversation): SentMessage[] =>
  c.turns.map((t) => ({ role: t.speaker === c.speakerA ? "USER" : "ASSISTANT", content: t.caption ? `${t.text} [shared a photo: ${t.caption}]` : t.text }));

/** The agent-loop section's script as messages: one USER goal, then a call and its result per step. */
function scriptMessages(steps: number): SentMessage[] {
  const out: SentMessage[] = [{ role: "USER", content: "Find where the failing module reads its configuration and fix it." }];
  for (const [i, step] of agentScript(steps).entries()) {
    const id = `call_${i + 1}`;
    out.push({ role: "ASSISTANT", content: "", toolCalls: [{ id, name: step.tool, arguments: step.args }] });
    out.push({ role: "TOOL", content: step.result, toolCallId: id });
  }
  return out;
}

function loadSessions(ctx: BenchContext): { sessions: Session[]; notes: string[] } {
  const notes: string[] = [];
  // The default run takes each session's first messages, so that it fits a loaded machine; --full the whole sessions.
  const limit = bySize(ctx, { quick: 160, normal: envInt("BENCH_PREFIX_MESSAGES", 240), full: Number.POSITIVE_INFINITY });
  const cut = (s: Session): Session => ({ ...s, messages: s.messages.slice(0, limit) });
  const steps = bySize(ctx, { quick: 80, normal: 120, full: 400 });
  const sessions: Session[] = [
    { dataset: "synthetic", name: "generated conversation gen-1", messages: conversationMessages(generatedConversations()[0]!) },
    { dataset: "synthetic", name: `agent script, ${steps} tool steps`, messages: scriptMessages(steps) },
  ];
  const locomo = loadConversations(locomoDir());
  if (locomo.length === 0) notes.push(`No LoCoMo data under ${locomoDir()} (set LOCOMO_DIR): LoCoMo rows left out.`);
  for (const c of ctx.quick ? locomo.slice(0, 1) : locomo) sessions.push({ dataset: "LoCoMo", name: c.id, messages: conversationMessages(c) });
  const agents = loadTranscripts();
  if (agents.length === 0) notes.push("No agent sessions (set AGENT_SESSIONS_DIR): agent-session rows left out.");
  for (const a of ctx.quick ? agents.slice(0, 2) : agents) sessions.push({ dataset: "agent sessions", name: a.name, messages: a.messages });
  return { sessions: sessions.map(cut), notes };
}

/** The newest USER text before message `i`, as the turn's recall query (at most 500 characters). */
function queryBefore(messages: readonly SentMessage[], i: number): string | undefined {
  for (let j = i - 1; j >= 0; j--) if (messages[j]!.role === "USER" && messages[j]!.content.trim()) return messages[j]!.content.slice(0, 500);
  return undefined;
}

async function replay(code: ServiceCode, render: ReplayRequestModule, endpoint: string, session: Session, window: number, n: number): Promise<Run> {
  const t = await freshTable(endpoint, `px-${code.label.replace(/[^A-Za-z0-9]/g, "").slice(0, 12)}-${window}-${n}`);
  const { deps } = inlineSessionDeps(code, t);
  const key = { tenantId: "bench", processId: `px-${n}` };
  await code.upsertProcess(deps, key.tenantId, key.processId, { projectId: "bench" });
  const run: Run = {
    dataset: session.dataset, session: session.name, code: code.label, window,
    turns: 0, folds: 0, emergency: 0, quiet: 0, quietKept: 0, breaks: 0, falseKept: 0, quietBreaks: [],
    cache: Object.fromEntries(FORMATS.map((f) => [f, { read: 0, total: 0 }])) as Run["cache"],
  };
  let previous: Record<Format, { request: Record<string, unknown>; segments: string[] }> | undefined;
  let summaryId: string | null = null;
  const turn = async (query: string | undefined) => {
    const answer = await code.runTurn(deps, key, { model: { contextWindow: window }, format: "anthropic", ...(query ? { query } : {}) });
    const block = render.splitReplayBlock(answer.context);
    const requests = Object.fromEntries(
      FORMATS.map((f) => {
        const request = f === "plain" ? plainPrompt(answer) : f === "anthropic" ? answer.request! : render.replayRequest(f as ReplayFormat, answer.messages, block);
        return [f, { request: request as Record<string, unknown>, segments: requestSegments(request as Record<string, unknown>) }];
      }),
    ) as NonNullable<typeof previous>;
    const fold = answer.compaction.compacted || (answer.summaryId ?? null) !== summaryId;
    summaryId = answer.summaryId ?? null;
    run.turns++;
    if (previous) {
      const broken = FORMATS.filter((f) => {
        const shared = sharedPrefix(previous![f].segments, requests[f].segments);
        run.cache[f].read += shared.read;
        run.cache[f].total += shared.total;
        return !shared.kept;
      });
      const emergency = !fold && answer.compaction.trimmed !== undefined;
      if (fold) run.folds++;
      else if (emergency) run.emergency++;
      else {
        run.quiet++;
        if (broken.length === 0) run.quietKept++;
        else if (run.quietBreaks.length < 3) run.quietBreaks.push(`turn ${run.turns} ${broken[0]}: ${requestBreak(previous[broken[0]!].request, requests[broken[0]!].request)}`);
      }
      if (broken.length > 0 && !emergency) run.breaks++;
      if (broken.length > 0 && (answer as { prefix?: { kept: boolean } }).prefix?.kept === true) run.falseKept++;
    }
    previous = requests;
  };
  for (const [i, m] of session.messages.entries()) {
    if (m.role === "ASSISTANT" && i > 0 && session.messages[i - 1]!.role !== "ASSISTANT") await turn(queryBefore(session.messages, i));
    const parsed = AppendMessageBody.safeParse(sentBody(m));
    if (!parsed.success) continue; // a message past the API's limits is refused for every code alike
    await code.appendMessage(deps, key, parsed.data);
  }
  await turn(queryBefore(session.messages, session.messages.length));
  return run;
}

const loadRender = (root: string) => import(pathToFileURL(path.join(root, "core/domain/native/replay-request.ts")).href) as Promise<ReplayRequestModule>;

/** A run's counts summed over runs. */
type Totals = Omit<Run, "dataset" | "session" | "code" | "window" | "quietBreaks">;

function totals(runs: readonly Run[]): Totals {
  const add = (pick: (r: Run) => number) => sum(runs.map(pick));
  return {
    turns: add((r) => r.turns),
    folds: add((r) => r.folds),
    emergency: add((r) => r.emergency),
    quiet: add((r) => r.quiet),
    quietKept: add((r) => r.quietKept),
    breaks: add((r) => r.breaks),
    falseKept: add((r) => r.falseKept),
    cache: Object.fromEntries(FORMATS.map((f) => [f, { read: add((r) => r.cache[f].read), total: add((r) => r.cache[f].total) }])) as Totals["cache"],
  };
}

const share = (a: number, b: number) => (b === 0 ? "-" : pct(a / b));
const perFold = (t: Totals) => (t.folds === 0 ? (t.breaks === 0 ? "- (0 breaks)" : `- (${t.breaks} breaks)`) : fmt(t.breaks / t.folds, 2));

export async function runPrefixStability(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const { sessions, notes } = loadSessions(ctx);
  const windows = envInts("BENCH_WINDOWS", [32_000, 128_000]);
  const runAll = async (code: ServiceCode, render: ReplayRequestModule) => {
    const runs: Run[] = [];
    for (const window of windows) {
      const done = await Promise.all(sessions.map((s, n) => replay(code, render, endpoint, s, window, n)));
      for (const r of done) ctx.log(`prefix-stability: ${code.label} @ ${window / 1000}k ${r.session.slice(0, 28)}: ${r.turns} turns, ${r.folds} folds, ${r.emergency} emergency, quiet kept ${r.quietKept}/${r.quiet}${r.quietBreaks.length ? ` (${r.quietBreaks.join("; ")})` : ""}`);
      runs.push(...done);
    }
    return runs;
  };
  const after = await runAll(await loadServiceCode(repoRoot, "after"), await loadRender(repoRoot));
  const before = await withCheckout(BASELINE, async (checkout) => runAll(await loadServiceCode(checkout.root, `before (${checkout.commit})`), await loadRender(checkout.root)));

  const datasets = [...new Set(sessions.map((s) => s.dataset))];
  const groups = windows.flatMap((window) => datasets.map((dataset) => ({ window, dataset })));
  const pick = (runs: Run[], g: { window: number; dataset: string }) => totals(runs.filter((r) => r.window === g.window && r.dataset === g.dataset));
  const tables: Table[] = [
    {
      title: "Turns that kept the prefix (quiet turns: no fold, no emergency trim) and prefix changes per fold, after vs before",
      columns: ["window", "sessions", "turns", "folds: after / before", "emergency: after / before", "quiet kept: after", "before", "prefix changes / fold: after", "before", "said kept, broke"],
      rows: groups.map((g) => {
        const [a, b] = [pick(after, g), pick(before, g)];
        return [fmt(g.window), g.dataset, fmt(a.turns), `${a.folds} / ${b.folds}`, `${a.emergency} / ${b.emergency}`, `${share(a.quietKept, a.quiet)} of ${fmt(a.quiet)}`, `${share(b.quietKept, b.quiet)} of ${fmt(b.quiet)}`, perFold(a), perFold(b), fmt(a.falseKept)];
      }),
    },
    {
      title: "Emulated prompt-cache read share per format (characters of each request a cache holding the previous request reads), after / before",
      columns: ["window", "sessions", ...FORMATS],
      rows: groups.map((g) => {
        const [a, b] = [pick(after, g), pick(before, g)];
        return [fmt(g.window), g.dataset, ...FORMATS.map((f) => `${share(a.cache[f].read, a.cache[f].total)} / ${share(b.cache[f].read, b.cache[f].total)}`)];
      }),
    },
  ];
  const all = totals(after);
  const targets: Target[] = [
    { name: "quiet turns that kept the prefix (every format)", target: "100%", measured: `${all.quietKept} of ${all.quiet}`, met: all.quietKept === all.quiet },
    { name: "prefix changes per fold", target: "1", measured: perFold(all), met: all.breaks === all.folds },
    { name: "turns that said prefix.kept and broke it", target: "0", measured: fmt(all.falseKept), met: all.falseKept === 0 },
  ];
  return {
    id: "prefix-stability",
    title: "Prefix stability: prompts that only grow between folds, and the prompt cache they keep",
    command: "LOCOMO_DIR=<folder> AGENT_SESSIONS_DIR=<folder> npm run bench -- --only prefix-stability",
    tables,
    targets,
    notes: [
      ...notes,
      `Sessions: ${sessions.map((s) => `${s.name.slice(0, 32)} (${s.dataset}, ${s.messages.length} messages)`).join("; ")}.`,
      `Before: the service code at ${BASELINE}; folds inline with the offline summarizer; recall queried on every turn; default tunables.`,
    ],
    data: { after, before },
  };
}
