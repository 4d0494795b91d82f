/** What a scenario is: a starting state built once, 2-3 actors over a copy of it, and its own checks. */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { CompactionConfig } from "../../core/services/deps.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import type { Snapshot } from "../invariants.js";
import type { ScheduleRun } from "./scheduler.js";
import type { Stage } from "./setup.js";

export interface Actor {
  /** Unique in its scenario; the schedules name it (letters, digits, `-`). */
  name: string;
  /**
   * A real service call over the actor's own deps (its store is held call by call); `client` is
   * the held client itself, for an actor that stands for something other than the service (the TTL).
   */
  run(deps: ServiceDeps, client?: DynamoDBDocumentClient): Promise<unknown>;
  /** How its container runs compaction (default inline). */
  execution?: CompactionConfig["execution"];
}

export interface ScenarioCheck {
  stage: Stage;
  /** Read back after every actor ended and a fresh caller settled the process. */
  snapshot: Snapshot;
  run: ScheduleRun;
}

export interface Ready {
  actors: Actor[];
  /** Checks of this scenario on top of the shared invariants: violations, empty when all hold. */
  check?(c: ScenarioCheck): string[] | Promise<string[]>;
  /**
   * The process may end deleted, hidden or with originals a retention removed: the shared settle
   * and invariants are left to `check`, which runs alone (the actors' outcomes are still checked).
   */
  ownChecksOnly?: boolean;
}

export interface Scenario<T = unknown> {
  /** Short id used on the command line (`--scenario S1`). */
  id: string;
  /** What it races, in one line. */
  title: string;
  /**
   * Builds the starting state once, with the real services over a store that is not held; each
   * schedule starts from a copy (template.ts). Returns what the actors need (ids), as plain data.
   */
  build(stage: Stage): Promise<T>;
  /** The actors of one schedule, over a copy of the built state (`data` renamed to it). */
  actors(stage: Stage, data: T): Ready;
}

/** Keeps a scenario's data type between its two halves, then lists it with the others. */
export const scenario = <T>(s: Scenario<T>): Scenario => s as Scenario;
