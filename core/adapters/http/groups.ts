/** Every route group: the local runner serves them all on one port (the Lambda functions each serve their own). */
import type { RouteGroup } from "./app.js";
import { summarizingRouteGroups } from "./compaction-routes.js";
import { plainRouteGroups } from "./plain-groups.js";

export const allRouteGroups: RouteGroup[] = [...plainRouteGroups, ...summarizingRouteGroups];
