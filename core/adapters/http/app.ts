/**
 * The HTTP app (Hono), an inbound adapter: the same routes run in Lambda (hono/aws-lambda), in
 * the local runner and in tests. Route groups let a Lambda function carry only the routes (and
 * SDKs) it needs. Each route reads its input, calls one service and answers with its result.
 */
import { Hono, type Context } from "hono";
import { AppError } from "../../domain/errors.js";
import type { RateLimiter } from "../../ports/rate-limiter.js";
import type { ServiceDeps } from "../../services/deps.js";
import type { TenantResolver } from "./auth.js";
import { createCursorSeal, LOCAL_CURSOR_SECRET, type CursorSeal } from "./cursors.js";
import { errorResponse } from "./errors.js";
import { readId } from "./input.js";

export type Env = { Variables: { tenantId: string; cursors: CursorSeal } };
export type RouteGroup = (app: Hono<Env>, deps: ServiceDeps) => void;

export interface HttpAppOptions {
  deps: ServiceDeps;
  resolveTenant: TenantResolver;
  groups: RouteGroup[];
  /** The key of the paging cursors' HMAC (CURSOR_SECRET); unset: the local default (cursors.ts). */
  cursorSecret?: string;
  /** The per-tenant request rate; absent, requests are not counted (the local runner's default). */
  rateLimiter?: RateLimiter;
}

export const tenantOf = (c: Context<Env>) => c.get("tenantId");

/** The tenant and the `:processId` of a process route. */
export const processKey = (c: Context<Env>) => ({ tenantId: tenantOf(c), processId: readId(c, "processId") });

/** Seals and opens the paging cursors of a listing (cursors.ts). */
export const cursorsOf = (c: Context<Env>) => c.get("cursors");

export function createHttpApp({
  deps,
  resolveTenant,
  groups,
  cursorSecret = LOCAL_CURSOR_SECRET,
  rateLimiter,
}: HttpAppOptions): Hono<Env> {
  const app = new Hono<Env>();
  const cursors = createCursorSeal(cursorSecret);
  app.onError((err, c) => errorResponse(c, err, deps.log));
  app.notFound((c) => c.json({ error: { code: "route.not_found", message: `no route ${c.req.method} ${c.req.path}` } }, 404));
  app.use("*", async (_c, next) => {
    await next();
    deps.metrics.flush();
  });
  app.get("/health", (c) => c.json({ ok: true }));
  app.use("/v1/*", async (c, next) => {
    const tenant = await resolveTenant(c);
    if (!tenant) {
      throw new AppError("auth", "auth.invalid_key", "missing or unknown API key (Authorization: Bearer <key>)");
    }
    c.set("tenantId", tenant);
    c.set("cursors", cursors);
    // Counted after the key is known and before the body is read: a tenant past its rate costs
    // one conditional write and nothing else (docs/reliability.md, "Limits, budgets and rates").
    if (rateLimiter) {
      const decision = await rateLimiter.take(tenant);
      if (!decision.ok) {
        deps.metrics.rateLimited(tenant);
        throw new AppError(
          "too_many_requests",
          "rate.limited",
          `more than ${decision.limit} requests per second for this tenant; retry after ${decision.retryAfterSeconds} s`,
          { limit: decision.limit, retryAfterSeconds: decision.retryAfterSeconds },
        );
      }
    }
    await next();
  });
  for (const group of groups) group(app, deps);
  return app;
}
