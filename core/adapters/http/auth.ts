/**
 * Where the tenant comes from: in AWS the Lambda authorizer resolved the key (its context is the
 * only source); locally the runner's `MEMORY_API_KEYS` map, then the table's keys (local/server.ts).
 * Never the request body.
 */
import type { Context } from "hono";
import { Id } from "../../domain/fields.js";

export type TenantResolver = (c: Context) => string | null | Promise<string | null>;

export const DEFAULT_LOCAL_KEYS = "local-dev-key=local";

/** Parses `key1=tenantA,key2=tenantB`; a bad entry is a startup error, not a silent skip. */
export function parseApiKeys(spec: string): Map<string, string> {
  const keys = new Map<string, string>();
  for (const entry of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const at = entry.lastIndexOf("=");
    const key = entry.slice(0, at).trim();
    const tenant = entry.slice(at + 1).trim();
    if (at <= 0 || !key || !Id.safeParse(tenant).success) {
      throw new Error(`MEMORY_API_KEYS: entry '${entry.slice(0, 8)}…' is not key=tenant with a valid tenant id`);
    }
    keys.set(key, tenant);
  }
  if (keys.size === 0) throw new Error("MEMORY_API_KEYS holds no key");
  return keys;
}

/** The bearer token of an `Authorization` header value, or null. */
export function bearerToken(header: string | undefined | null): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1] ?? null;
}

/** The bearer token of the request's `Authorization` header, or null. */
export function bearerKey(c: Context): string | null {
  return bearerToken(c.req.header("authorization"));
}

export function staticKeyResolver(keys: Map<string, string>): TenantResolver {
  return (c) => {
    const key = bearerKey(c);
    return key ? (keys.get(key) ?? null) : null;
  };
}

/** Reads `requestContext.authorizer.lambda.tenantId` of the HTTP API event (hono/aws-lambda). */
export const authorizerTenant: TenantResolver = (c) => {
  const event = (c.env as { event?: { requestContext?: { authorizer?: { lambda?: { tenantId?: unknown } } } } })
    ?.event;
  const tenant = event?.requestContext?.authorizer?.lambda?.tenantId;
  return typeof tenant === "string" && Id.safeParse(tenant).success ? tenant : null;
};
