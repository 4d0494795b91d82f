/**
 * Routes only the local runner has: a PutEvents-compatible endpoint (AWS JSON 1.1) so the real
 * EventBridge client works against it, and the list of events the service published. Both need an
 * API key, like every `/v1` route: the key decides the tenant the events may act for or show.
 */
import type { Context, Hono } from "hono";
import { randomUUID } from "node:crypto";
import type { LocalBus } from "../core/adapters/events/local-bus.js";
import type { Env } from "../core/adapters/http/app.js";
import { readText } from "../core/adapters/http/input.js";
import { AppError } from "../core/domain/errors.js";
import { bearerKey } from "../core/adapters/http/auth.js";
import type { PublisherPolicy } from "../core/domain/event-publishers.js";

export interface LocalRouteDeps {
  bus: LocalBus;
  /** The tenant of an API key (MEMORY_API_KEYS, then the table's keys), or null. */
  tenantOfKey: (key: string) => Promise<string | null>;
}

interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
}

/**
 * What stands for the publisher's AWS account locally: the tenant of the key that put the event.
 * EventBridge stamps `account` on every event; the local endpoint stamps this.
 */
const localPublisher = (tenantId: string) => `key:${tenantId}`;

/**
 * The local runner's publisher policy (core/domain/event-publishers.ts): an event put through
 * `/local/eventbridge` acts only for its key's tenant; one delivered inside the process (the
 * service's own, or a test's) for any.
 */
export const localPublishers: PublisherPolicy = (publisher, tenantId) =>
  publisher === undefined || publisher === localPublisher(tenantId);

const awsJsonError = (type: string, message: string) => ({ __type: type, message });

/**
 * The key of a PutEvents request: a bearer token, or the access key id of a SigV4 signature (the
 * EventBridge client signs with its credentials, so `credentials: { accessKeyId: <API key> }`
 * carries the key without changing the client). The signature itself is not checked: locally the
 * key is the credential, as it is for the HTTP API.
 */
function putEventsKey(c: Context): string | null {
  const bearer = bearerKey(c);
  if (bearer) return bearer;
  const sigV4 = /^AWS4-HMAC-SHA256\s+Credential=([^/\s,]+)\//.exec(c.req.header("authorization") ?? "");
  return sigV4?.[1] ?? null;
}

/** The largest PutEvents body read (EventBridge's own request limit, 256 KB). */
export const LOCAL_EVENTBRIDGE_MAX_BYTES = 256 * 1024;

export function localRoutes(app: Hono<Env>, { bus, tenantOfKey }: LocalRouteDeps) {
  const tenantOf = async (key: string | null) => (key ? tenantOfKey(key) : null);

  // The AWS SDK appends a slash to a custom endpoint's path.
  app.on("POST", ["/local/eventbridge", "/local/eventbridge/"], async (c) => {
    const tenant = await tenantOf(putEventsKey(c));
    if (!tenant) {
      return c.json(awsJsonError("UnrecognizedClientException", "missing or unknown API key (Bearer, or the access key id)"), 401);
    }
    const target = c.req.header("x-amz-target");
    if (target !== "AWSEvents.PutEvents") {
      return c.json(awsJsonError("UnknownOperationException", `unsupported target ${target ?? "(none)"}`), 400);
    }
    let body: { Entries?: PutEventsEntry[] };
    try {
      // Read within EventBridge's own limit (a 413 past it), never whole first.
      body = JSON.parse(await readText(c, LOCAL_EVENTBRIDGE_MAX_BYTES));
    } catch (e) {
      if (e instanceof AppError && e.kind === "too_large") return c.json(awsJsonError("RequestEntityTooLargeException", e.message), 413);
      return c.json(awsJsonError("SerializationException", "body is not JSON"), 400);
    }
    const entries = Array.isArray(body.Entries) ? body.Entries : [];
    if (entries.length === 0 || entries.length > 10) {
      return c.json(awsJsonError("ValidationException", "Entries must hold 1 to 10 events"), 400);
    }
    const results: Array<{ EventId?: string; ErrorCode?: string; ErrorMessage?: string }> = [];
    for (const entry of entries) {
      let detail: unknown;
      try {
        detail = JSON.parse(entry.Detail ?? "");
      } catch {
        results.push({ ErrorCode: "MalformedDetail", ErrorMessage: "Detail is not valid JSON" });
        continue;
      }
      if (!entry.Source || !entry.DetailType || typeof detail !== "object" || detail === null) {
        results.push({ ErrorCode: "InvalidArgument", ErrorMessage: "Source, DetailType and an object Detail are required" });
        continue;
      }
      // Accepted whatever tenant it names, as EventBridge accepts it; the handler decides.
      await bus.deliver({
        source: entry.Source,
        detailType: entry.DetailType,
        detail: detail as Record<string, unknown>,
        account: localPublisher(tenant),
      });
      results.push({ EventId: randomUUID() });
    }
    c.header("content-type", "application/x-amz-json-1.1");
    return c.body(
      JSON.stringify({ FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results }),
      200,
    );
  });

  app.get("/local/events", async (c) => {
    const tenant = await tenantOf(bearerKey(c));
    if (!tenant) {
      return c.json({ error: { code: "auth.invalid_key", message: "missing or unknown API key (Authorization: Bearer <key>)" } }, 401);
    }
    return c.json({
      items: bus
        .published()
        .filter((e) => e.detail.tenantId === tenant)
        .map((e) => ({ source: e.source, detailType: e.detailType, detail: e.detail, time: e.time })),
    });
  });
}
