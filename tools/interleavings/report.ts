/** The text `npm run check:interleavings` prints: one line per scenario and a last summary line. */
import type { ScenarioReport } from "./checker.js";
import type { ScheduleResult } from "./checker.js";

const rate = (n: number, ms: number) => (ms > 0 ? (n / (ms / 1000)).toFixed(1) : "-");

/** `S1  walker+revert  1000 schedules (750 systematic, complete through 2 preemptions; 250 random)  0 failing  52.1 s  19.2/s` */
export function scenarioLine(r: ScenarioReport): string {
  const reach = r.complete ? `all ${r.systematic} schedules` : `${r.systematic} systematic, complete through ${r.completeThrough} preemption${r.completeThrough === 1 ? "" : "s"}`;
  const random = r.random > 0 ? `; ${r.random} random` : "";
  return `${r.id.padEnd(4)} ${r.actors.join("+").padEnd(28)} ${String(r.schedules).padStart(6)} schedules (${reach}${random})  ${r.failures} failing  ${(r.ms / 1000).toFixed(1)} s  ${rate(r.schedules, r.ms)}/s`;
}

/** The failing schedule of a scenario and the first violations, indented under its line. */
export function failureLines(r: ScenarioReport, max = 5): string[] {
  if (!r.firstFailure) return [];
  const { schedule, violations } = r.firstFailure;
  return [
    `     first failing schedule: ${schedule || "(default)"}   replay: npm run check:interleavings -- --scenario ${r.id} --replay '${schedule}'`,
    ...violations.slice(0, max).map((v) => `       ${v}`),
    ...(violations.length > max ? [`       ... ${violations.length - max} more`] : []),
  ];
}

/** The last line: `interleavings: N schedules over S scenarios, F failing (T s, R schedules/s)`. */
export function summaryLine(reports: readonly ScenarioReport[], ms: number): string {
  const schedules = reports.reduce((n, r) => n + r.schedules, 0);
  const failing = reports.reduce((n, r) => n + r.failures, 0);
  return `interleavings: ${schedules} schedules over ${reports.length} scenarios, ${failing} failing (${(ms / 1000).toFixed(1)} s, ${rate(schedules, ms)} schedules/s)`;
}

/** A replayed schedule: its steps (actor and DynamoDB command), the outcomes, the violations. */
export function replayLines(result: ScheduleResult): string[] {
  const steps = result.run.steps.map((s, i) => `  ${String(i).padStart(3)} ${s.actor.padEnd(10)} ${s.call ?? "(ended)"}${s.refused ? `  refused: ${s.refused}` : ""}`);
  const outcomes = [...result.run.outcomes].map(([name, o]) =>
    `  ${name}: ${o.ok ? "returned" : `threw ${o.error instanceof Error ? `${o.error.name}: ${o.error.message}` : String(o.error)}`}`,
  );
  return [
    `schedule: ${result.schedule || "(default)"}`,
    "steps:",
    ...steps,
    "outcomes:",
    ...outcomes,
    result.violations.length === 0 ? "violations: none" : `violations (${result.violations.length}):`,
    ...result.violations.map((v) => `  ${v}`),
  ];
}
