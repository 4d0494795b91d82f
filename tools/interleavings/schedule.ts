/**
 * The replayable form of a schedule: the actor of each step, run-length encoded, e.g.
 * `walker*3,revert*12,walker` (walker three times, then revert twelve times, then walker once).
 * Steps past the end of a schedule follow the default policy ({@link defaultChoice}), so a
 * schedule is cut after its last step that differs from it.
 */
import type { Choice, Step } from "./scheduler.js";

/**
 * The non-preemptive policy: the previous actor while it holds a call, else the first actor (in
 * declaration order) holding one, else the first asleep (waiting for it in real time).
 */
export function defaultChoice(choice: Choice): string {
  if (choice.previous !== null && choice.pending.includes(choice.previous)) return choice.previous;
  return choice.pending[0] ?? choice.enabled[0]!;
}

/** Whether choosing `actor` at this step preempts the previous actor (it could have gone on). */
export const preempts = (choice: Choice, actor: string) =>
  choice.previous !== null && choice.previous !== actor && choice.pending.includes(choice.previous);

/** The actors of a run, cut after the last step the default policy would not have taken. */
export function scheduleOf(steps: readonly Step[]): string[] {
  let end = 0;
  steps.forEach((s, i) => {
    if (s.actor !== defaultChoice(s)) end = i + 1;
  });
  return steps.slice(0, end).map((s) => s.actor);
}

export function formatSchedule(actors: readonly string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < actors.length; ) {
    let j = i;
    while (j < actors.length && actors[j] === actors[i]) j++;
    parts.push(j - i > 1 ? `${actors[i]}*${j - i}` : actors[i]!);
    i = j;
  }
  return parts.join(",");
}

/** Parses `walker*3,revert` (or the plain `walker,walker,walker,revert`); an empty string is the default run. */
export function parseSchedule(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z][\w-]*)(?:\*(\d+))?$/.exec(part);
    if (!m) throw new Error(`bad schedule step '${part}': expected actor or actor*count`);
    const count = m[2] === undefined ? 1 : Number(m[2]);
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`bad count in '${part}'`);
    for (let i = 0; i < count; i++) out.push(m[1]!);
  }
  return out;
}
