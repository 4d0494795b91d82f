/** Lambda: the HTTP routes that may summarize: turns, compaction, range compaction, saving settings. */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "../core/adapters/http/app.js";
import { authorizerTenant } from "../core/adapters/http/auth.js";
import { summarizingRouteGroups } from "../core/adapters/http/summarizing-groups.js";
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";

const app = createHttpApp({ deps: createSummarizingDeps(), resolveTenant: authorizerTenant, groups: summarizingRouteGroups });

export const handler = handle(app);
