/** Publishing the service's own events (the catalogue: core/domain/events.ts). */
import type { CatalogueEvent } from "../domain/events.js";
import type { ServiceDeps } from "./deps.js";

/** Events are notifications: a publish failure is logged, it never undoes a committed compaction. */
export async function publishSafely(deps: ServiceDeps, event: CatalogueEvent) {
  try {
    await deps.events.publish(event);
  } catch (e) {
    deps.log.error("event publish failed", { detailType: event.detailType, error: String(e) });
  }
}
