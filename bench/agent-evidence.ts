/**
 * Agent evidence (docs/benchmarks.md, "Agent evidence"): what a coding agent's prompt still
 * carries, after the service folded its session, of the files, commands, errors and rules the
 * session mentioned; side by side with truncation at the same window and with the service's code
 * before the evidence ledger.
 *
 * Method:
 * - Sessions: every file of `AGENT_SESSIONS_DIR` (eight real sessions of Codex CLI, Claude Code,
 *   Cursor and aider), parsed by bench/support/agent-transcripts.ts: the Codex rollout as its
 *   native Responses API items, the text transcripts as plain messages whose tool calls carry the
 *   arguments in their agent's vocabulary. No network.
 * - Replay: each session is appended message by message through the service's `appendMessage`, and
 *   `runTurn` is asked for the prompt before each assistant message and once at the end, at a 32k
 *   and a 128k window, folds inline with the offline summarizer (default tunables otherwise). The
 *   same replay runs this tree's code ("after") and the code of `BENCH_EVIDENCE_BASELINE` (default
 *   8d69875, "before"), checked out in a temporary worktree.
 * - Mentioned: the distinct file paths and commands of the session's tool calls, the error lines
 *   of its tool results and the rule sentences ("never / always / do not / must") of its USER
 *   messages, by the ledger's rules (core/domain/ledger/) over every stored message, without the
 *   ledger's caps (bench/support/evidence-measure.ts).
 * - Carried: the final prompt (the memory block and the active messages, each call's name and
 *   arguments included) holds the item word for word. Truncation: the newest messages that fit
 *   0.85 of the window. "Only folded": items every mention of which is out of the prompt's verbatim
 *   messages (folded, or dropped by truncation).
 * - Ledger size: the final ledger section's tokens and its budget (`ledgerWindowShare` of the window).
 */
import type { Message } from "../core/domain/model.js";
import { AppendMessageBody } from "../core/adapters/http/schemas.js";
import { newestSummary } from "../core/domain/replay.js";
import { messageTokens } from "../core/domain/tokens.js";
import { readAllMessages } from "../tools/invariants.js";
import { type BenchContext, envInts, repoRoot, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import { evidenceOf, KINDS, promptText, shares, type Kind, type KindShare } from "./support/evidence-measure.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { inlineSessionDeps, loadServiceCode, withCheckout, type ServiceCode } from "./support/service-code.js";
import { loadTranscripts, sentBody, type TranscriptSession } from "./support/agent-transcripts.js";
import { fmt, sum } from "./support/stats.js";

const BASELINE = process.env.BENCH_EVIDENCE_BASELINE?.trim() || "8d69875";

interface Run {
  session: string;
  code: string;
  window: number;
  ours: Record<Kind, KindShare>;
  truncation: Record<Kind, KindShare>;
  folds: number;
  promptTokens: number;
  ledgerTokens: number;
  ledgerBudget: number;
}

/** One session through one service code at one window: the final prompt against truncation. */
async function replay(code: ServiceCode, endpoint: string, session: TranscriptSession, window: number): Promise<Run> {
  const t = await freshTable(endpoint, `ev-${code.label.replace(/[^A-Za-z0-9]/g, "")}-${window}`);
  const { store, deps } = inlineSessionDeps(code, t);
  const key = { tenantId: "bench", processId: `ev-${window}` };
  await code.upsertProcess(deps, key.tenantId, key.processId, { projectId: "bench" });
  let last: Awaited<ReturnType<ServiceCode["runTurn"]>> | undefined;
  let folds = 0;
  const turn = async () => {
    last = await code.runTurn(deps, key, { model: { contextWindow: window } });
    if (last.compaction.compacted) folds++;
  };
  for (const [i, m] of session.messages.entries()) {
    if (m.role === "ASSISTANT" && i > 0 && session.messages[i - 1]!.role !== "ASSISTANT") await turn();
    const parsed = AppendMessageBody.safeParse(sentBody(m));
    if (!parsed.success) continue; // a message past the API's limits is refused for every variant alike
    await code.appendMessage(deps, key, parsed.data);
  }
  await turn();
  const stored = await readAllMessages(store, key);
  const evidence = evidenceOf(stored);
  const active = last!.messages;
  const ours = shares(evidence, [last!.context.block, ...active.map(promptText)].join("\n"), new Set(active.map((m) => m.id)));
  const kept = truncated(stored, window);
  const truncation = shares(evidence, kept.map(promptText).join("\n"), new Set(kept.map((m) => m.id)));
  const view = await store.activeView(key);
  const head = view ? newestSummary(view) : null;
  const section = (head?.metadata as { ledger?: { tokens: number; budgetTokens: number } } | undefined)?.ledger;
  return {
    session: session.name,
    code: code.label,
    window,
    ours,
    truncation,
    folds,
    promptTokens: code.estimateTokens(last!.context.block) + sum(active.map((m) => m.tokens)),
    ledgerTokens: section?.tokens ?? 0,
    ledgerBudget: section?.budgetTokens ?? 0,
  };
}

/** The newest messages whose tokens fit 0.85 of the window (the newest one always). */
function truncated(messages: readonly Message[], window: number): Message[] {
  let tokens = 0;
  let i = messages.length - 1;
  for (; i >= 0; i--) {
    const cost = messageTokens(messages[i]!);
    if (i < messages.length - 1 && tokens + cost > 0.85 * window) break;
    tokens += cost;
  }
  return messages.slice(i + 1);
}

const total = (runs: readonly Run[], pick: (r: Run) => Record<Kind, KindShare>, kind: Kind) => {
  const s = runs.map((r) => pick(r)[kind]);
  return { mentioned: sum(s.map((x) => x.mentioned)), carried: sum(s.map((x) => x.carried)), outside: sum(s.map((x) => x.outside)), outsideCarried: sum(s.map((x) => x.outsideCarried)) };
};
const ratio = (a: number, b: number) => (b === 0 ? "-" : fmt(a / b, 2));

export async function runAgentEvidence(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const sessions = loadTranscripts();
  if (sessions.length === 0) throw new Error("no agent sessions: set AGENT_SESSIONS_DIR to the folder of the sessions (docs/benchmarks.md, \"Agent evidence\")");
  const windows = envInts("BENCH_WINDOWS", [32_000, 128_000]);
  const runAll = async (code: ServiceCode) => {
    const runs: Run[] = [];
    for (const window of windows) {
      const done = await Promise.all(sessions.map((s) => replay(code, endpoint, s, window)));
      for (const r of done) ctx.log(`agent-evidence: ${code.label} @ ${window / 1000}k ${r.session.slice(0, 24)}: ${KINDS.map((k) => `${k} ${r.ours[k].carried}/${r.ours[k].mentioned} (trunc ${r.truncation[k].carried})`).join(", ")}; ledger ${r.ledgerTokens}/${r.ledgerBudget}; folds ${r.folds}`);
      runs.push(...done);
      ctx.log(`agent-evidence: ${code.label} @ ${window / 1000}k done`);
    }
    return runs;
  };
  const after = await runAll(await loadServiceCode(repoRoot, "after"));
  const before = await withCheckout(BASELINE, async (checkout) => runAll(await loadServiceCode(checkout.root, `before (${checkout.commit})`)));
  const runs = [...after, ...before];

  const tables: Table[] = windows.map((window) => {
    const a = after.filter((r) => r.window === window);
    const b = before.filter((r) => r.window === window);
    return {
      title: `${window / 1000}k window, over the ${sessions.length} sessions: share of the distinct items mentioned that the final prompt carries (only-folded: of those mentioned only in folded or dropped messages)`,
      columns: ["kind", "mentioned", "after", "before", "truncation 0.85", "after / truncation", "only folded: after", "before", "truncation"],
      rows: KINDS.map((kind) => {
        const [x, y, z] = [total(a, (r) => r.ours, kind), total(b, (r) => r.ours, kind), total(a, (r) => r.truncation, kind)];
        return [kind, fmt(x.mentioned), ratio(x.carried, x.mentioned), ratio(y.carried, y.mentioned), ratio(z.carried, z.mentioned), ratio(x.carried, z.carried), `${ratio(x.outsideCarried, x.outside)} of ${x.outside}`, `${ratio(y.outsideCarried, y.outside)} of ${y.outside}`, `${ratio(z.outsideCarried, z.outside)} of ${z.outside}`];
      }),
    };
  });
  tables.push({
    title: "Per session (after, 32k): items carried / mentioned, folds, final prompt and ledger section tokens",
    columns: ["session", "paths", "commands", "errors", "constraints", "folds", "prompt tokens", "ledger tokens / budget"],
    rows: after
      .filter((r) => r.window === windows[0])
      .map((r) => [r.session.slice(0, 40), ...KINDS.map((k) => `${r.ours[k].carried}/${r.ours[k].mentioned}`), fmt(r.folds), fmt(r.promptTokens), `${fmt(r.ledgerTokens)} / ${fmt(r.ledgerBudget)}`]),
  });

  const at32 = after.filter((r) => r.window === 32_000);
  const floor: Record<Kind, number> = { paths: 0.9, commands: 0.8, errors: 0.8, constraints: 1 };
  const targets: Target[] = at32.length === 0 ? [] : KINDS.flatMap((kind) => {
    const x = total(at32, (r) => r.ours, kind);
    const z = total(at32, (r) => r.truncation, kind);
    return [
      { name: `32k: ${kind} the final prompt carries`, target: `>= ${floor[kind]}`, measured: ratio(x.carried, x.mentioned), met: x.carried >= floor[kind] * x.mentioned },
      { name: `32k: ${kind} carried vs truncation`, target: ">= 2x", measured: `${x.carried} vs ${z.carried}`, met: x.carried >= 2 * z.carried },
    ];
  });
  if (at32.length > 0) {
    targets.push({ name: "32k: ledger section within its bound", target: "<= budget", measured: `max ${fmt(Math.max(...at32.map((r) => r.ledgerTokens)))} of ${fmt(at32[0]!.ledgerBudget)}`, met: at32.every((r) => r.ledgerTokens <= r.ledgerBudget) });
  }
  return {
    id: "agent-evidence",
    title: "Agent evidence: files, commands, errors and rules a folded agent session keeps (chars/4)",
    command: "AGENT_SESSIONS_DIR=<folder of the sessions> npm run bench -- --only agent-evidence",
    tables,
    targets,
    notes: [
      `Sessions: ${sessions.map((s) => `${s.name.slice(0, 32)} (${s.agent}, ${s.format}, ${s.messages.length} messages)`).join("; ")}.`,
      `Before: the service code at ${BASELINE}; folds inline with the offline summarizer; default tunables (ledgerWindowShare 0.1, ledgerMaxTokens 8000).`,
    ],
    data: { runs },
  };
}
