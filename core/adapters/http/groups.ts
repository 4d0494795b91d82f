/** Route groups per Lambda function; the local runner serves them all. */
import type { RouteGroup } from "./app.js";
import { compactionRoutes } from "./compaction-routes.js";
import { inboxRoutes } from "./inbox-routes.js";
import { memoryRoutes } from "./memory-routes.js";
import { messageRoutes } from "./message-routes.js";
import { processRoutes } from "./process-routes.js";
import { searchRoutes } from "./search-routes.js";
import { readSettingsRoutes, saveSettingsRoutes } from "./settings-routes.js";

/** Routes that never summarize (functions/plain-routes.ts). */
export const plainRouteGroups: RouteGroup[] = [processRoutes, messageRoutes, memoryRoutes, readSettingsRoutes, inboxRoutes, searchRoutes];
/** Routes that may summarize (functions/summarizing-routes.ts). */
export const summarizingRouteGroups: RouteGroup[] = [compactionRoutes, saveSettingsRoutes];
export const allRouteGroups: RouteGroup[] = [...plainRouteGroups, ...summarizingRouteGroups];
