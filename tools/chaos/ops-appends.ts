/**
 * Operations that append many messages in one go: a tool call with its results (appended in
 * order, retried as a whole like an engine would; native content for the engines that speak a
 * provider's format), and a flood of appends from eight concurrent senders that pushes a process
 * past what one commit transaction can archive.
 */
import type { OpSpec, OpPlan } from "./plan.js";
import { appendMessage } from "../../core/services/messages.js";
import { attempt, NO_FAULTS, unexpected, withRetry } from "./attempt.js";
import { ack } from "./checks.js";
import { engineBody } from "./native-messages.js";
import type { ChaosRun, Engine } from "./run-state.js";

export async function runGroup(run: ChaosRun, e: Engine, op: OpPlan, spec: Extract<OpSpec, { kind: "group" }>) {
  // A command and a file read, as an agent's calls: the evidence ledger keeps both through every fold.
  const calls = spec.results.map((r, k) => ({ id: `tc-${r.nonce}`, name: k % 2 ? "Read" : "Bash", arguments: JSON.stringify(k % 2 ? { file_path: `src/part-${k}.ts` } : { command: `make step-${k}` }) }));
  for (const m of [spec.call, ...spec.results]) e.ledger.sent.add(m.nonce);
  const out = await withRetry(run, e, op, "tool group", true, async (deps) => {
    const ids: Array<[string, string]> = [];
    const first = await appendMessage(deps, e.key, engineBody(e, spec.call, { calls }));
    ids.push([spec.call.nonce, first.message.id]);
    for (const [k, r] of spec.results.entries()) {
      const res = await appendMessage(deps, e.key, engineBody(e, r, { answers: calls[k]!.id }));
      ids.push([r.nonce, res.message.id]);
    }
    return ids;
  });
  for (const [nonce, id] of out ?? []) ack(e.ledger, nonce, id);
}

export async function runFlood(run: ChaosRun, e: Engine, spec: Extract<OpSpec, { kind: "flood" }>) {
  const queue = [...spec.messages];
  const sender = async () => {
    for (let m = queue.shift(); m; m = queue.shift()) {
      const draft = m;
      e.ledger.sent.add(draft.nonce);
      const r = await attempt(run, e, NO_FAULTS, (deps) => appendMessage(deps, e.key, engineBody(e, draft)));
      if (r.ok) ack(e.ledger, draft.nonce, r.value.message.id);
      else unexpected(run, e, "flood append", r.error);
    }
  };
  await Promise.all(Array.from({ length: 8 }, sender));
}
