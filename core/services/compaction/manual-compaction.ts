/** Manual compaction within a budget (docs/compaction.md, "Manual compaction"). */
import type { CompactionResult } from "../../domain/compaction-result.js";
import { modeForRatio, promptTokens } from "../../domain/mode.js";
import { cappedWindow, foldRulesFor, resolveModelWindow, type TurnWindow } from "../../domain/model-windows.js";
import { replayTokens } from "../../domain/replay.js";
import type { ProcessKey } from "../../ports/store.js";
import { compactIfNeeded, type CompactionRequest } from "./compaction.js";
import type { ServiceDeps } from "../deps.js";
import { queueFold } from "./transitions.js";
import { budgetExceededError } from "./model-budget.js";
import { settledView } from "./settle.js";

/** What `POST .../compaction` answers: the result and the window it used. */
export interface ManualCompactionResult extends CompactionResult {
  window: TurnWindow;
}

/**
 * `POST .../compaction`: the fold runs in the request; when it is not done within
 * `manualBudgetMs` the request gives up its lease (so its own late commit is refused), queues the
 * same compaction for the worker and answers 202 `compaction_queued`. The queued fold only runs on
 * the state the request started from, so a fold that did commit in between is not repeated. Over
 * the tenant's daily model budget it throws a 429 `budget.exceeded` (nothing written).
 */
export async function compactManually(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
): Promise<{ status: 200 | 202; result: ManualCompactionResult }> {
  const model = resolveModelWindow(request.model);
  const view = await settledView(deps, key);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  // The window the compaction uses, as a turn's (docs/turns.md, "The window the turn used").
  const window = cappedWindow(model, tunables.maxPromptTokens);
  const contextWindow = window.tokens;
  const owner = deps.ids.token();
  const giveUp = new AbortController();
  const work = compactIfNeeded(deps, key, request, { view: structuredClone(view), tunables, contextWindow, leaseOwner: owner, abandoned: giveUp.signal, manual: true });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), deps.compaction.manualBudgetMs)));
  const first = await Promise.race([work, expired]).finally(() => clearTimeout(timer));
  if (first) {
    const { view: _view, budget, ...result } = first;
    if (budget) throw budgetExceededError(budget, deps.clock.now());
    return { status: 200, result: { ...result, window } };
  }
  work.catch((e) => deps.log.warn("abandoned compaction failed", { processId: key.processId, error: String(e) }));
  // Whether the fold holds the lease yet or takes it later, it can no longer commit: released
  // here, or let go by the fold itself when it sees the signal.
  giveUp.abort();
  await deps.store.releaseLease(key, owner);
  const tokensBefore = promptTokens(request.prompt, replayTokens(view)).tokens;
  const mode = request.force ?? modeForRatio(tokensBefore / contextWindow, tunables);
  const base = { mode, compacted: false, compactedMessages: 0, tokensBefore, tokensAfter: tokensBefore };
  if (mode === "NONE") return { status: 200, result: { ...base, window } };
  const fold = await queueFold(deps, key, view, {
    mode,
    job: "manual",
    contextWindow,
    tokensBefore,
    foldUnit: foldRulesFor(request.model.name).foldUnit,
    forced: request.force !== undefined,
    instructions: request.instructions,
  });
  return { status: 202, result: { ...base, reason: "compaction_queued", memoryId: fold.id, window } };
}
