/** Every scenario of the checker, in the order the report lists them. */
import type { Scenario } from "./scenario.js";
import { blockScenarios } from "./scenarios-blocks.js";
import { commitScenarios } from "./scenarios-commits.js";
import { controlScenarios } from "./scenarios-controls.js";
import { eventScenarios } from "./scenarios-events.js";
import { foldScenarios } from "./scenarios-folds.js";
import { lifecycleScenarios } from "./scenarios-lifecycle.js";
import { nativeScenarios } from "./scenarios-native.js";
import { rollForwardScenarios } from "./scenarios-roll-forward.js";

const number = (s: Scenario) => Number(s.id.slice(1));

export const SCENARIOS: readonly Scenario[] = [...rollForwardScenarios, ...foldScenarios, ...controlScenarios, ...eventScenarios, ...commitScenarios, ...nativeScenarios, ...lifecycleScenarios, ...blockScenarios].sort(
  (a, b) => number(a) - number(b),
);

/** The scenario of `id` (case-insensitive); throws naming the known ids otherwise. */
export function scenarioById(id: string): Scenario {
  const found = SCENARIOS.find((s) => s.id.toLowerCase() === id.toLowerCase());
  if (!found) throw new Error(`unknown scenario '${id}'; known: ${SCENARIOS.map((s) => s.id).join(", ")}`);
  return found;
}
