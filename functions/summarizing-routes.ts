/** Lambda: the HTTP routes that may summarize (turns, compaction, range compaction, saving settings), deleting, export and import. */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "../core/adapters/http/app.js";
import { authorizerTenant } from "../core/adapters/http/auth.js";
import { summarizingRouteGroups } from "../core/adapters/http/compaction-routes.js";
import { createRateLimiterFromEnv } from "../core/composition/rate-limiter.js";
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";
import { createPowertoolsTracing } from "../core/adapters/tracing/powertools-tracing.js";
import { cursorSecretOf, serviceNameOf } from "../core/composition/env.js";

const tracing = createPowertoolsTracing(serviceNameOf(process.env));
const deps = createSummarizingDeps(process.env, { tracing });
const app = createHttpApp({
  deps,
  resolveTenant: authorizerTenant,
  groups: summarizingRouteGroups,
  // The export pages with sealed cursors.
  cursorSecret: cursorSecretOf(process.env),
  rateLimiter: createRateLimiterFromEnv(process.env, deps.log, tracing),
});
const serve = handle(app);

export const handler = (...args: Parameters<typeof serve>) => tracing.invocation(args[0], () => serve(...args));
