/**
 * The public HTTP API: every /v1 route behind the API-key Lambda authorizer, grouped into two
 * functions so that the routes which never summarize do not bundle (or cold-start) the LLM SDKs.
 * Engines in any account call it over HTTPS with `Authorization: Bearer <key>`.
 */
import { CfnRoute } from "aws-cdk-lib/aws-apigatewayv2";
import { NagSuppressions } from "cdk-nag";
import { Api as HttpApi, use, type StackContext } from "sst/constructs";
import { stageConfigOf } from "./config.js";
import { Events } from "./events.js";
import { HANDLERS } from "./handlers.js";
import { serviceFunction } from "./service-function.js";
import { Storage } from "./storage.js";

/** Route -> the function group serving it. */
export const API_ROUTES = {
  "GET /health": "plainRoutes",
  "GET /openapi.json": "plainRoutes",
  "PUT /v1/processes/{processId}": "plainRoutes",
  "GET /v1/processes/{processId}": "plainRoutes",
  "DELETE /v1/processes/{processId}": "summarizingRoutes",
  "GET /v1/processes": "plainRoutes",
  "POST /v1/processes/{processId}/messages": "plainRoutes",
  "GET /v1/processes/{processId}/messages": "plainRoutes",
  "GET /v1/processes/{processId}/messages/{messageId}": "plainRoutes",
  "PATCH /v1/processes/{processId}/messages/{messageId}": "plainRoutes",
  "GET /v1/processes/{processId}/context": "plainRoutes",
  "GET /v1/processes/{processId}/memories": "plainRoutes",
  "GET /v1/processes/{processId}/memories/{memoryId}": "plainRoutes",
  "GET /v1/processes/{processId}/memories/{memoryId}/sources": "plainRoutes",
  "POST /v1/processes/{processId}/memories/{memoryId}/revert": "plainRoutes",
  "GET /v1/processes/{processId}/history/search": "plainRoutes",
  "GET /v1/processes/{processId}/export": "summarizingRoutes",
  "POST /v1/processes/{processId}/import": "summarizingRoutes",
  "GET /v1/settings": "plainRoutes",
  "PUT /v1/settings": "summarizingRoutes",
  "GET /v1/inbox": "plainRoutes",
  "POST /v1/inbox/{itemId}/answer": "plainRoutes",
  "POST /v1/processes/{processId}/compaction": "summarizingRoutes",
  "POST /v1/processes/{processId}/compaction/range": "summarizingRoutes",
  "POST /v1/processes/{processId}/turns": "summarizingRoutes",
} as const satisfies Record<string, "plainRoutes" | "summarizingRoutes">;

/** The routes without the authorizer: liveness and the contract's OpenAPI document. */
export const PUBLIC_ROUTES = ["GET /health", "GET /openapi.json"] as const;
type PublicRoute = (typeof PUBLIC_ROUTES)[number];

/** Why each public route has no authorizer: cdk-nag's AwsSolutions-APIG4 is suppressed with it. */
const PUBLIC_BECAUSE: Record<PublicRoute, string> = {
  "GET /health": "GET /health is public on purpose: load balancers and uptime checks call it without a key, and it reads nothing and answers { ok: true }.",
  "GET /openapi.json":
    "GET /openapi.json is public on purpose: clients and code generators read the API's contract before they hold a key; it is the same generated file for every caller and reads no tenant data.",
};

/** A revoked key keeps working for at most this long (API Gateway caches per Authorization value). */
export const AUTHORIZER_CACHE_TTL = "60 seconds";
/** Per-stage ceiling that bounds what a leaked or runaway client can cost. */
export const THROTTLE = { rate: 100, burst: 200 };

export function Api({ stack, app }: StackContext) {
  const config = stageConfigOf(app);
  const { table, blobs } = use(Storage);
  const { bus, worker } = use(Events);

  const authorizer = serviceFunction(stack, "Authorizer", HANDLERS.authorizer, { config, table });
  const groups = {
    plainRoutes: serviceFunction(stack, "PlainRoutes", HANDLERS.plainRoutes, { config, table, bus, blobBucket: blobs }),
    summarizingRoutes: serviceFunction(stack, "SummarizingRoutes", HANDLERS.summarizingRoutes, { config, table, bus, worker, blobBucket: blobs }),
  };

  const api = new HttpApi(stack, "Http", {
    authorizers: {
      apiKey: {
        type: "lambda",
        function: authorizer,
        responseTypes: ["simple"],
        identitySource: ["$request.header.Authorization"],
        resultsCacheTtl: AUTHORIZER_CACHE_TTL,
      },
    },
    defaults: { authorizer: "apiKey", throttle: THROTTLE },
    // Bearer keys, never cookies: any origin (the inspector page included) may call with its key,
    // delete a process, and read the header that pages an export (docs/api.md, "Export and import").
    cors: {
      allowOrigins: ["*"],
      allowHeaders: ["authorization", "content-type"],
      allowMethods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
      exposeHeaders: ["export-next-cursor"],
      maxAge: "1 day",
    },
    accessLog: { retention: "one_month" },
    routes: Object.fromEntries(
      Object.entries(API_ROUTES).map(([route, group]) => [
        route,
        {
          function: groups[group],
          ...((PUBLIC_ROUTES as readonly string[]).includes(route) ? { authorizer: "none" as const } : {}),
        },
      ]),
    ),
  });

  for (const route of api.node.findAll()) {
    const reason = route instanceof CfnRoute ? PUBLIC_BECAUSE[route.routeKey as PublicRoute] : undefined;
    if (reason) NagSuppressions.addResourceSuppressions(route, [{ id: "AwsSolutions-APIG4", reason }]);
  }

  stack.addOutputs({ ApiUrl: api.url });
  return { api, functions: { ...groups, authorizer } };
}
