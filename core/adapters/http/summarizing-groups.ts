/** The route groups of the function that may summarize (functions/summarizing-routes.ts). */
import type { RouteGroup } from "./app.js";
import { compactionRoutes } from "./compaction-routes.js";
import { saveSettingsRoutes } from "./settings-routes.js";

export const summarizingRouteGroups: RouteGroup[] = [compactionRoutes, saveSettingsRoutes];
