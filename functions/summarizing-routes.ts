/** Lambda: the HTTP routes that may summarize: turns, compaction, range compaction, saving settings. */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "../core/adapters/http/app.js";
import { authorizerTenant } from "../core/adapters/http/auth.js";
import { summarizingRouteGroups } from "../core/adapters/http/compaction-routes.js";
import { createRateLimiterFromEnv } from "../core/composition/rate-limiter.js";
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";

const deps = createSummarizingDeps();
const app = createHttpApp({
  deps,
  resolveTenant: authorizerTenant,
  groups: summarizingRouteGroups,
  rateLimiter: createRateLimiterFromEnv(process.env, deps.log),
});

export const handler = handle(app);
