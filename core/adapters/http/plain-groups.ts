/** The route groups of the function that never summarizes (functions/plain-routes.ts). */
import type { RouteGroup } from "./app.js";
import { inboxRoutes } from "./inbox-routes.js";
import { memoryRoutes } from "./memory-routes.js";
import { messageRoutes } from "./message-routes.js";
import { processRoutes } from "./process-routes.js";
import { searchRoutes } from "./search-routes.js";
import { readSettingsRoutes } from "./settings-routes.js";

/** A module of its own, so that the bundle of the plain routes never imports the summarizing ones. */
export const plainRouteGroups: RouteGroup[] = [processRoutes, messageRoutes, memoryRoutes, readSettingsRoutes, inboxRoutes, searchRoutes];
