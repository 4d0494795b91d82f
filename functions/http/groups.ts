/** Route groups per Lambda function; the local runner serves them all. */
import type { RouteGroup } from "./app.js";
import { compactionRoutes } from "./compaction-routes.js";
import { coreRoutes } from "./core-routes.js";
import { inboxRoutes } from "./inbox-routes.js";
import { searchRoutes } from "./search-routes.js";

/** Routes that never summarize (functions/api.ts). */
export const apiGroups: RouteGroup[] = [coreRoutes, inboxRoutes, searchRoutes];
/** Routes that may summarize (functions/compaction.ts). */
export const compactionGroups: RouteGroup[] = [compactionRoutes];
export const allRouteGroups: RouteGroup[] = [...apiGroups, ...compactionGroups];
