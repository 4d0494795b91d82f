/** Lambda: the HTTP routes that never summarize (no LLM SDK in this bundle; docs/deploy.md). */
import { handle } from "hono/aws-lambda";
import { readFile } from "node:fs/promises";
import { createHttpApp } from "../core/adapters/http/app.js";
import { authorizerTenant } from "../core/adapters/http/auth.js";
import { cursorSecretOf } from "../core/composition/env.js";
import { plainRouteGroups } from "../core/adapters/http/plain-groups.js";
import { openApiRoute } from "../core/adapters/http/openapi-route.js";
import { createBaseDeps } from "../core/composition/base-deps.js";
import { withBlobStore } from "../core/composition/blob-store.js";
import { createRateLimiterFromEnv } from "../core/composition/rate-limiter.js";

// Never folds, so no offline summarizer to fall back to (core/composition/base-deps.ts). Appends
// store large native parts and reads resolve them: the blob store from BLOB_BUCKET.
const deps = withBlobStore(createBaseDeps(), process.env);
const app = createHttpApp({
  deps,
  resolveTenant: authorizerTenant,
  // docs/openapi.json, copied next to the bundle at deploy (stacks/service-function.ts).
  groups: [...plainRouteGroups, openApiRoute(() => readFile(new URL("./openapi.json", import.meta.url), "utf8"))],
  cursorSecret: cursorSecretOf(process.env),
  rateLimiter: createRateLimiterFromEnv(process.env, deps.log),
});

export const handler = handle(app);
