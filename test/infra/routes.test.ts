/**
 * API Gateway's route table (stacks/api.ts) and the handlers' own routes must agree: a route only
 * in the stack would reach a function that answers 404, a route only in the app would be
 * unreachable in AWS, and a route in the wrong group would run in a function without its SDKs.
 */
import { describe, expect, it } from "vitest";
import { silentLog } from "../../core/adapters/log.js";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { summarizingRouteGroups } from "../../core/adapters/http/compaction-routes.js";
import { plainRouteGroups } from "../../core/adapters/http/plain-groups.js";
import { openApiRoute } from "../../core/adapters/http/openapi-route.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { API_ROUTES, PUBLIC_ROUTES } from "../../stacks/api.js";

/** `GET /v1/processes/{processId}` keys of an app's routes (middleware excluded). */
function routeKeys(groups: typeof plainRouteGroups): string[] {
  const app = createHttpApp({ deps: createDeps({ env: {}, log: silentLog }), resolveTenant: () => null, groups });
  return [
    ...new Set(
      app.routes
        .filter((r) => r.method !== "ALL")
        .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`),
    ),
  ].sort();
}

const stackRoutes = (group: "plainRoutes" | "summarizingRoutes") =>
  Object.entries(API_ROUTES)
    .filter(([, g]) => g === group)
    .map(([route]) => route)
    .sort();

describe("API Gateway routes match the handlers' routes", () => {
  it("sends to the plain routes function exactly the routes its app serves", () => {
    // functions/plain-routes.ts serves the OpenAPI document besides its route groups.
    expect(stackRoutes("plainRoutes")).toEqual(routeKeys([...plainRouteGroups, openApiRoute(async () => "{}")]));
  });

  it("sends to the summarizing routes function exactly its routes (its /health is never reached)", () => {
    expect(stackRoutes("summarizingRoutes")).toEqual(routeKeys(summarizingRouteGroups).filter((r) => !PUBLIC_ROUTES.includes(r as never)));
  });
});
