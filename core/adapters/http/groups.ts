/** Route groups per Lambda function (each in its own module, so a bundle carries only its own); the local runner serves them all. */
import type { RouteGroup } from "./app.js";
import { plainRouteGroups } from "./plain-groups.js";
import { summarizingRouteGroups } from "./summarizing-groups.js";

export { plainRouteGroups, summarizingRouteGroups };
export const allRouteGroups: RouteGroup[] = [...plainRouteGroups, ...summarizingRouteGroups];
