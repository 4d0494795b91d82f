/**
 * The public HTTP API: every /v1 route behind the API-key Lambda authorizer, grouped into two
 * functions so that the routes which never summarize do not bundle (or cold-start) the LLM SDKs.
 * Engines in any account call it over HTTPS with `Authorization: Bearer <key>`.
 */
import { Api as HttpApi, use, type StackContext } from "sst/constructs";
import { stageConfigOf } from "./config.js";
import { Events } from "./events.js";
import { HANDLERS } from "./handlers.js";
import { serviceFunction } from "./service-function.js";
import { Storage } from "./storage.js";

/** Route -> the function group serving it. */
export const API_ROUTES = {
  "GET /health": "api",
  "PUT /v1/processes/{processId}": "api",
  "GET /v1/processes/{processId}": "api",
  "GET /v1/processes": "api",
  "POST /v1/processes/{processId}/messages": "api",
  "GET /v1/processes/{processId}/messages": "api",
  "GET /v1/processes/{processId}/messages/{messageId}": "api",
  "PATCH /v1/processes/{processId}/messages/{messageId}": "api",
  "GET /v1/processes/{processId}/context": "api",
  "GET /v1/processes/{processId}/memories": "api",
  "GET /v1/processes/{processId}/memories/{memoryId}": "api",
  "GET /v1/processes/{processId}/memories/{memoryId}/sources": "api",
  "POST /v1/processes/{processId}/memories/{memoryId}/revert": "api",
  "GET /v1/processes/{processId}/history/search": "api",
  "GET /v1/settings": "api",
  "PUT /v1/settings": "compaction",
  "GET /v1/inbox": "api",
  "POST /v1/inbox/{itemId}/answer": "api",
  "POST /v1/processes/{processId}/compaction": "compaction",
  "POST /v1/processes/{processId}/compaction/range": "compaction",
  "POST /v1/processes/{processId}/turns": "compaction",
} as const satisfies Record<string, "api" | "compaction">;

/** The only route without the authorizer. */
export const PUBLIC_ROUTES = ["GET /health"] as const;

/** A revoked key keeps working for at most this long (API Gateway caches per Authorization value). */
export const AUTHORIZER_CACHE_TTL = "60 seconds";
/** Per-stage ceiling that bounds what a leaked or runaway client can cost. */
export const THROTTLE = { rate: 100, burst: 200 };

export function Api({ stack, app }: StackContext) {
  const config = stageConfigOf(app);
  const { table } = use(Storage);
  const { bus, worker } = use(Events);

  const authorizer = serviceFunction(stack, "Authorizer", HANDLERS.authorizer, { config, table });
  const groups = {
    api: serviceFunction(stack, "ApiRoutes", HANDLERS.api, { config, table, bus }),
    compaction: serviceFunction(stack, "CompactionRoutes", HANDLERS.compaction, { config, table, bus, worker }),
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
    // Bearer keys, never cookies: any origin (the inspector page included) may call with its key.
    cors: {
      allowOrigins: ["*"],
      allowHeaders: ["authorization", "content-type"],
      allowMethods: ["GET", "PUT", "POST", "PATCH"],
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

  stack.addOutputs({ ApiUrl: api.url });
  return { api, functions: { ...groups, authorizer } };
}
