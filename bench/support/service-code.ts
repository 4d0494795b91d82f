/**
 * The service code a benchmark session drives, loaded by path: this tree's, or another commit's
 * checked out into a temporary git worktree, so that one run measures the code before and after a
 * change side by side (docs/benchmarks.md, "Compaction off the turn's critical path"). The driver
 * stays this tree's; only the service modules come from the other commit.
 */
import { execFileSync } from "node:child_process";
import { lstatSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { repoRoot } from "./context.js";
import type { BenchTable } from "./dynamo.js";

type OpenAISummarizerModule = typeof import("../../core/adapters/llm/openai-summarizer.js");
type OfflineSummarizerModule = typeof import("../../core/adapters/llm/offline-summarizer.js");
type TokensModule = typeof import("../../core/domain/tokens.js");
type MessagesModule = typeof import("../../core/services/messages.js");
type ProcessesModule = typeof import("../../core/services/processes.js");
type TurnModule = typeof import("../../core/services/turn.js");
type LogModule = typeof import("../../core/adapters/log.js");
type MetricsModule = typeof import("../../core/adapters/metrics/emf-metrics.js");
type StoreModule = typeof import("../../core/adapters/dynamodb/store.js");
type DepsModule = typeof import("../../core/composition/create-deps.js");
type HandlersModule = typeof import("../../core/adapters/events/handlers.js");

/** What a session needs of the service. Another commit's answers may lack fields this tree's have. */
export interface ServiceCode {
  /** "after" for this tree, "before" for the baseline. */
  label: string;
  createOpenAISummarizer: OpenAISummarizerModule["createOpenAISummarizer"];
  createOfflineSummarizer: OfflineSummarizerModule["createOfflineSummarizer"];
  estimateTokens: TokensModule["estimateTokens"];
  appendMessage: MessagesModule["appendMessage"];
  upsertProcess: ProcessesModule["upsertProcess"];
  runTurn: TurnModule["runTurn"];
  silentLog: LogModule["silentLog"];
  createRecordingMetrics: MetricsModule["createRecordingMetrics"];
  createDynamoStore: StoreModule["createDynamoStore"];
  createDeps: DepsModule["createDeps"];
  handleCompactionRequested: HandlersModule["handleCompactionRequested"];
}

/** The service modules under `root` (a checkout of this repository), by path. */
export async function loadServiceCode(root: string, label: string): Promise<ServiceCode> {
  const load = <T>(file: string): Promise<T> => import(pathToFileURL(path.join(root, file)).href) as Promise<T>;
  const [summarizer, offline, tokens, messages, processes, turn, log, metrics, store, deps, handlers] = await Promise.all([
    load<OpenAISummarizerModule>("core/adapters/llm/openai-summarizer.ts"),
    load<OfflineSummarizerModule>("core/adapters/llm/offline-summarizer.ts"),
    load<TokensModule>("core/domain/tokens.ts"),
    load<MessagesModule>("core/services/messages.ts"),
    load<ProcessesModule>("core/services/processes.ts"),
    load<TurnModule>("core/services/turn.ts"),
    load<LogModule>("core/adapters/log.ts"),
    load<MetricsModule>("core/adapters/metrics/emf-metrics.ts"),
    load<StoreModule>("core/adapters/dynamodb/store.ts"),
    load<DepsModule>("core/composition/create-deps.ts"),
    load<HandlersModule>("core/adapters/events/handlers.ts"),
  ]);
  return {
    label,
    createOpenAISummarizer: summarizer.createOpenAISummarizer,
    createOfflineSummarizer: offline.createOfflineSummarizer,
    estimateTokens: tokens.estimateTokens,
    appendMessage: messages.appendMessage,
    upsertProcess: processes.upsertProcess,
    runTurn: turn.runTurn,
    silentLog: log.silentLog,
    createRecordingMetrics: metrics.createRecordingMetrics,
    createDynamoStore: store.createDynamoStore,
    createDeps: deps.createDeps,
    handleCompactionRequested: handlers.handleCompactionRequested,
  };
}

/**
 * The deps of one replayed session on `code`, in table `t`: folds inline with the offline
 * summarizer, and a memory blob store (a Codex rollout's encrypted reasoning goes there, as in a
 * deployment).
 */
export function inlineSessionDeps(code: ServiceCode, t: BenchTable) {
  const store = code.createDynamoStore({ client: t.client, tableName: t.tableName });
  const deps = code.createDeps({
    env: { COMPACTION_EXECUTION: "inline" },
    store,
    log: code.silentLog,
    metrics: code.createRecordingMetrics(),
    events: { publish: async () => {} },
    summarizerFactory: async () => code.createOfflineSummarizer(),
    blobs: createMemoryBlobStore(),
  });
  return { store, deps };
}

/** A commit checked out beside this tree: its path and its short commit id. */
export interface Checkout {
  root: string;
  commit: string;
}

const git = (args: string[]) => execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/**
 * `fn` over `ref` checked out (detached) in a temporary git worktree under the OS's temporary
 * directory, with this tree's node_modules linked in; the worktree is removed afterwards, also
 * when `fn` throws or the process exits first (Ctrl-C in bench/run.ts).
 */
export async function withCheckout<T>(ref: string, fn: (checkout: Checkout) => Promise<T>): Promise<T> {
  const commit = git(["rev-parse", "--short", `${ref}^{commit}`]);
  const root = path.join(mkdtempSync(path.join(tmpdir(), "bench-baseline-")), "tree");
  const modules = path.join(root, "node_modules");
  const remove = () => {
    // The link goes first, so that removing the worktree can never reach the shared modules.
    if (lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(modules);
    git(["worktree", "remove", "--force", root]);
    rmSync(path.dirname(root), { recursive: true, force: true });
  };
  git(["worktree", "add", "--detach", root, commit]);
  process.once("exit", remove);
  try {
    symlinkSync(realpathSync(path.join(repoRoot, "node_modules")), modules, "dir");
    return await fn({ root, commit });
  } finally {
    process.off("exit", remove);
    remove();
  }
}
