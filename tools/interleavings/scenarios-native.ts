/**
 * Scenarios of native content (docs/api.md, "Native content"; tools/interleavings/README.md,
 * "The interleaving checker"): a native Anthropic tool loop appended while the worker commits a
 * prepared fold and a turn commits it itself, and an append whose blob was put but whose message
 * write never happened (its container died there) or was held while the engine's retry and the
 * next turn ran. The large result is kept as a blob in the stage's blob store.
 */
import type { Message } from "../../core/domain/model.js";
import { appendMessage } from "../../core/services/messages.js";
import { appender, committer, crashingAtAppend, formatTurn } from "./actors.js";
import { carrying, largeResultSha, NATIVE_CALL, nativeBody, nativeReadBack, nativeResults, pairViolations, turnRequestViolations } from "./native-loop.js";
import type { Outcome } from "./scheduler.js";
import { scenario, type Scenario } from "./scenario.js";
import { outgrownFold } from "./scenarios-commits.js";
import { addMessages, chat, createProcess, type Stage } from "./setup.js";

/** Six messages and the native assistant turn whose two calls are still running. */
async function callsRunning(stage: Stage): Promise<Record<string, never>> {
  await createProcess(stage);
  await addMessages(stage, chat(6));
  await appendMessage(stage.deps(), stage.key, nativeBody(NATIVE_CALL));
  return {};
}

/** Why an actor that must succeed did not (nothing when it answered). */
export const failed = (name: string, outcome: Outcome | undefined): string[] =>
  outcome?.ok ? [] : [`${name} failed: ${outcome ? String((outcome.error as Error)?.message ?? outcome.error) : "no outcome"}`];

/** The id an appender actor answered for its `i`-th message. */
const appended = (outcome: Outcome | undefined, i = 0) => (outcome?.ok ? (outcome.value as string[])[i] : undefined);

export const nativeScenarios: Scenario[] = [
  scenario({
    id: "S19",
    title: "a native tool loop (thinking and two calls, then one message of both results, one a blob) appended while the worker extends and commits a prepared fold and an EMERGENCY turn in format anthropic commits it itself",
    build: outgrownFold,
    actors: (stage, { foldId }) => {
      const results = nativeResults();
      return {
        actors: [appender(stage, [nativeBody(NATIVE_CALL), nativeBody(results)]), committer(stage, foldId), formatTurn(stage, { ratio: 0.97 })],
        async check({ snapshot, run }) {
          const append = run.outcomes.get("append");
          return [
            ...failed("append", append),
            ...(await nativeReadBack(stage, snapshot.messages, append?.ok ? [NATIVE_CALL, results] : [])),
            ...pairViolations(snapshot.messages, NATIVE_CALL, results),
            ...turnRequestViolations("turn", run.outcomes.get("turn"), [NATIVE_CALL, results]),
          ];
        },
      };
    },
  }),
  scenario({
    id: "S20",
    title: "a turn carrying native tool results dies between its blob put and its message write, while the next append (results of both calls again) and an inline turn in format anthropic run",
    build: callsRunning,
    actors: (stage) => {
      const lost = nativeResults("a");
      const results = nativeResults("b");
      return {
        actors: [
          crashingAtAppend(stage, formatTurn(stage, { name: "crashed", ratio: 0.5, message: nativeBody(lost, "results-1") })),
          appender(stage, [nativeBody(results, "results-2")]),
          formatTurn(stage, { ratio: 0.9, execution: "inline" }),
        ],
        async check({ snapshot, run }) {
          const v: string[] = [];
          const crashed = run.outcomes.get("crashed");
          const at = crashed?.ok ? (crashed.value as { crashed: boolean; blobs?: string[] }) : undefined;
          // Not vacuous: the blob was put, the write never happened.
          if (!at?.crashed) v.push(`the crashed turn did not die at its message write (${JSON.stringify(at ?? null)})`);
          else if (!at.blobs?.includes(largeResultSha("a"))) v.push("the crashed turn died before its blob was put");
          if (carrying(snapshot.messages, lost).length > 0) v.push("the message whose write never happened is stored");
          v.push(...failed("append", run.outcomes.get("append")));
          v.push(...(await nativeReadBack(stage, snapshot.messages, [NATIVE_CALL, results])));
          v.push(...pairViolations(snapshot.messages, NATIVE_CALL, results));
          v.push(...turnRequestViolations("turn", run.outcomes.get("turn"), [NATIVE_CALL, results]));
          // The orphan is harmless: nothing names it, and it is still there for the process's erasure.
          if (!(await stage.blobs.list(stage.key)).includes(largeResultSha("a"))) v.push("the orphan blob is gone");
          return v;
        },
      };
    },
  }),
  scenario({
    id: "S21",
    title: "a turn carrying native tool results holds its message write after its blob put while the engine's retry of the same message (same idempotency key) and an inline turn in format anthropic run",
    build: callsRunning,
    actors: (stage) => {
      const results = nativeResults("a");
      return {
        actors: [
          formatTurn(stage, { name: "stalled", ratio: 0.5, message: nativeBody(results, "results-1") }),
          appender(stage, [nativeBody(results, "results-1")], "retry"),
          formatTurn(stage, { ratio: 0.9, execution: "inline" }),
        ],
        async check({ snapshot, run }) {
          const v: string[] = [];
          const retry = run.outcomes.get("retry");
          v.push(...failed("retry", retry));
          v.push(...(await nativeReadBack(stage, snapshot.messages, [NATIVE_CALL, results])));
          v.push(...pairViolations(snapshot.messages, NATIVE_CALL, results));
          for (const name of ["stalled", "turn"]) v.push(...turnRequestViolations(name, run.outcomes.get(name), [NATIVE_CALL, results]));
          // Both attempts answer the one stored message.
          const [stored] = carrying(snapshot.messages, results);
          const stalled = run.outcomes.get("stalled");
          const inStalled = stalled?.ok ? (stalled.value as { messages: Message[] }).messages.some((m) => m.id === stored?.id) : false;
          if (stored && appended(retry) !== stored.id) v.push(`the retry answered ${appended(retry) ?? "nothing"}, the message stored is ${stored.id}`);
          if (stored && stored.archivedInMemoryId === null && !inStalled) v.push(`the stalled turn's messages do not hold its message ${stored.id}`);
          return v;
        },
      };
    },
  }),
];
