/** Lambda: the HTTP routes that never summarize (no LLM SDK in this bundle; docs/deploy.md). */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "../core/adapters/http/app.js";
import { authorizerTenant } from "../core/adapters/http/auth.js";
import { cursorSecretOf } from "../core/composition/env.js";
import { plainRouteGroups } from "../core/adapters/http/plain-groups.js";
import { createDeps } from "../core/composition/create-deps.js";
import { createRateLimiterFromEnv } from "../core/composition/rate-limiter.js";

const deps = createDeps();
const app = createHttpApp({
  deps,
  resolveTenant: authorizerTenant,
  groups: plainRouteGroups,
  cursorSecret: cursorSecretOf(process.env),
  rateLimiter: createRateLimiterFromEnv(process.env, deps.log),
});

export const handler = handle(app);
