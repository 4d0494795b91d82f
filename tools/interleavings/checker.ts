/**
 * The interleaving checker's entry points: explore a scenario's schedules (systematic, then
 * random) and check each, or replay one schedule. Used by `npm run check:interleavings`
 * (scripts/check-interleavings.ts) and test/integration/interleavings.test.ts.
 */
import { actorDeps } from "./actor-deps.js";
import { checkSchedule } from "./checks.js";
import { createSystematicSearch, followPrefix, randomChooser } from "./explore.js";
import type { Scenario } from "./scenario.js";
import { formatSchedule, parseSchedule, scheduleOf } from "./schedule.js";
import { runSchedule, ScheduleMismatch, type Chooser, type ScheduleRun } from "./scheduler.js";
import type { World } from "./setup.js";
import { captureTemplate, stageFromTemplate, type Template } from "./template.js";

export interface ScheduleResult {
  /** The replayable form (schedule.ts). */
  schedule: string;
  violations: string[];
  run: ScheduleRun;
}

/** Copies the scenario's state to a new process, runs its actors under `choose`, checks the result. */
export async function runOne(world: World, scenario: Scenario, template: Template, choose: Chooser): Promise<ScheduleResult> {
  const { stage, data } = await stageFromTemplate(world, template);
  const ready = scenario.actors(stage, data);
  const actors = ready.actors.map((a) => ({
    name: a.name,
    start: (client: typeof world.client) =>
      a.run(actorDeps({ client, tableName: world.tableName, ids: stage.ids, events: stage.events, blobs: stage.blobs, ...(a.execution ? { execution: a.execution } : {}) }), client),
  }));
  const run = await runSchedule(world.client, actors, choose);
  const violations = await checkSchedule(stage, ready, run);
  return { schedule: formatSchedule(scheduleOf(run.steps)), violations, run };
}

/** Runs one schedule (`walker*3,revert*12`, or `""` for the default run) of a scenario. */
export async function replaySchedule(world: World, scenario: Scenario, schedule: string): Promise<ScheduleResult> {
  const prefix = parseSchedule(schedule);
  return runOne(world, scenario, await captureTemplate(world, scenario), followPrefix(prefix));
}

/** A promise and the function that resolves it. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export interface ExploreOptions {
  /** Schedules to run at most. */
  budget: number;
  /** Share of the budget kept for random schedules when the systematic search does not finish (default 0.25). */
  randomShare?: number;
  /** Seed of the random schedules (and of the order in which the systematic search samples). */
  seed?: number;
  /** Schedules run at once, each on its own process (default 1). */
  parallel?: number;
  /** Stop at the first schedule that breaks an invariant (default true). */
  stopAtFailure?: boolean;
}

export interface ScenarioReport {
  id: string;
  title: string;
  /** Its actors, in declaration order. */
  actors: string[];
  /** Schedules run and checked. */
  schedules: number;
  systematic: number;
  /** Systematic schedules run, by their number of preemptions. */
  byPreemptions: number[];
  /** Every schedule with at most this many preemptions was run (-1: not even the first). */
  completeThrough: number;
  /** Every schedule of the scenario was run. */
  complete: boolean;
  random: number;
  /** Schedules that failed. */
  failures: number;
  /** The shortest failing schedule found, and what it broke. */
  firstFailure?: { schedule: string; violations: string[] };
  /** Replays that could not follow their prefix (should be 0: runs are deterministic). */
  mismatches: number;
  ms: number;
}

/**
 * Runs the scenario's schedules: systematically, fewest preemptions first, then random ones with
 * the budget's random share (none when the systematic search ran every schedule), until the
 * budget is spent or a schedule fails (unless `stopAtFailure` is false).
 */
export async function exploreScenario(world: World, scenario: Scenario, options: ExploreOptions): Promise<ScenarioReport> {
  const started = Date.now();
  const seed = options.seed ?? 1;
  const template = await captureTemplate(world, scenario);
  const report: ScenarioReport = {
    id: scenario.id,
    title: scenario.title,
    actors: [],
    schedules: 0,
    systematic: 0,
    byPreemptions: [],
    completeThrough: -1,
    complete: false,
    random: 0,
    failures: 0,
    mismatches: 0,
    ms: 0,
  };
  const search = createSystematicSearch(seed);
  const systematicBudget = options.budget - Math.floor(options.budget * (options.randomShare ?? 0.25));
  let launched = 0;
  let systematicLaunched = 0;
  let randomSeeds = 0;
  let systematicInFlight = 0;
  // Resolved whenever a systematic run ends (it may have proposed schedules an idle worker can take).
  let runEnded = signal();
  const stopped = () => launched >= options.budget || report.complete || (report.failures > 0 && options.stopAtFailure !== false);
  const note = (result: ScheduleResult) => {
    report.schedules++;
    if (report.actors.length === 0) report.actors = [...result.run.outcomes.keys()];
    if (result.violations.length === 0) return;
    report.failures++;
    // The shortest failing schedule found is the easiest to read and to replay.
    if (!report.firstFailure || result.schedule.length < report.firstFailure.schedule.length) {
      report.firstFailure = { schedule: result.schedule, violations: result.violations };
    }
  };

  async function systematicRun(prefix: string[], preemptions: number) {
    const result = await runOne(world, scenario, template, followPrefix(prefix)).catch((e) => {
      if (e instanceof ScheduleMismatch) return null;
      throw e;
    });
    if (result === null) {
      report.mismatches++;
      return;
    }
    search.propose(prefix, result.run.steps);
    report.systematic++;
    report.byPreemptions[preemptions] = (report.byPreemptions[preemptions] ?? 0) + 1;
    note(result);
  }

  async function worker() {
    while (!stopped()) {
      if (systematicLaunched < systematicBudget) {
        const next = search.take();
        if (next === null) {
          // Runs still going may propose more; when none is, every schedule was run.
          if (systematicInFlight === 0) report.complete = true;
          else await runEnded.promise;
          continue;
        }
        launched++;
        systematicLaunched++;
        systematicInFlight++;
        await systematicRun(next.prefix, next.preemptions).finally(() => {
          systematicInFlight--;
          runEnded.resolve();
          runEnded = signal();
        });
      } else {
        launched++;
        const result = await runOne(world, scenario, template, randomChooser((seed * 0x9e3779b1 + randomSeeds++) >>> 0));
        report.random++;
        note(result);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 1) }, worker));
  const open = search.lowestOpen();
  report.completeThrough = open === null ? report.byPreemptions.length - 1 : open - 1;
  report.complete = open === null;
  report.ms = Date.now() - started;
  return report;
}
