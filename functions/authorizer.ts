/**
 * The HTTP API's Lambda authorizer (REQUEST type, payload 2.0, simple responses): hashes the bearer
 * key, reads its item with one GetItem, and hands the tenant to the route as `{ tenantId }`
 * (`event.requestContext.authorizer.lambda.tenantId`), the only place handlers take it from.
 *
 * An unknown, revoked or malformed key is denied here, at the edge: API Gateway answers 403 and no
 * route function runs, so random tokens cannot use up the stage's rate or any function's time. A
 * token that is not shaped like a key is denied without a read. API Gateway caches each answer
 * per `Authorization` value for AUTHORIZER_CACHE_TTL (stacks/api.ts): a revoked key is refused
 * within that time (docs/deploy.md, "API keys").
 */
import { createApiKeyStore, type ApiKeyStore } from "../core/adapters/dynamodb/api-keys.js";
import { bearerToken } from "../core/adapters/http/auth.js";
import { createDocumentClient } from "../core/adapters/dynamodb/client.js";
import { createPowertoolsLog } from "../core/adapters/log.js";
import { readTableEnv, serviceNameOf } from "../core/composition/env.js";
import type { Log } from "../core/ports/logger.js";

/** The parts of the HTTP API authorizer event (payload 2.0) this function reads. */
export interface AuthorizerEvent {
  type?: string;
  routeArn?: string;
  identitySource?: string[] | null;
  headers?: Record<string, string | undefined> | null;
  requestContext?: { requestId?: string };
}

export interface AuthorizerResult {
  isAuthorized: boolean;
  context?: { tenantId: string };
}

export type Authorizer = (event: AuthorizerEvent) => Promise<AuthorizerResult>;

export function createAuthorizer(deps: { keys: Pick<ApiKeyStore, "resolve">; log: Log }): Authorizer {
  return async (event) => {
    // HTTP APIs lower-case header names; the identity source carries the same value.
    const token = bearerToken(event.headers?.authorization ?? event.identitySource?.[0]);
    const resolved = token ? await deps.keys.resolve(token) : null;
    if (!resolved) {
      deps.log.warn("api key not accepted", {
        reason: token ? "unknown_or_revoked" : "not_a_bearer_token",
        requestId: event.requestContext?.requestId,
      });
      return { isAuthorized: false };
    }
    return { isAuthorized: true, context: { tenantId: resolved.tenantId } };
  };
}

let authorize: Authorizer | undefined;

function createAuthorizerFromEnv(env: NodeJS.ProcessEnv = process.env): Authorizer {
  const { tableName, dynamoEndpoint } = readTableEnv(env);
  return createAuthorizer({
    keys: createApiKeyStore({ client: createDocumentClient({ endpoint: dynamoEndpoint }), tableName }),
    log: createPowertoolsLog(serviceNameOf(env)),
  });
}

/** Lambda entry point; the client is built once per container. */
export const handler: Authorizer = (event) => (authorize ??= createAuthorizerFromEnv())(event);
