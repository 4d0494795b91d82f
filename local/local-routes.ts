/**
 * Routes only the local runner has: a PutEvents-compatible endpoint (AWS JSON 1.1) so the real
 * EventBridge client works against it, and the list of events the service published.
 */
import type { Hono } from "hono";
import { randomUUID } from "node:crypto";
import type { LocalBus } from "../core/adapters/events/local-bus.js";
import type { ServiceDeps } from "../core/services/deps.js";
import type { Env } from "../core/adapters/http/app.js";

export interface LocalRouteDeps {
  deps: ServiceDeps;
  bus: LocalBus;
  apiKeys: Map<string, string>;
}

interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
}

const awsJsonError = (type: string, message: string) => ({ __type: type, message });

export function localRoutes(app: Hono<Env>, { bus }: LocalRouteDeps) {
  // The AWS SDK appends a slash to a custom endpoint's path.
  app.on("POST", ["/local/eventbridge", "/local/eventbridge/"], async (c) => {
    const target = c.req.header("x-amz-target");
    if (target !== "AWSEvents.PutEvents") {
      return c.json(awsJsonError("UnknownOperationException", `unsupported target ${target ?? "(none)"}`), 400);
    }
    let body: { Entries?: PutEventsEntry[] };
    try {
      body = JSON.parse(await c.req.text());
    } catch {
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
      await bus.deliver({ source: entry.Source, detailType: entry.DetailType, detail: detail as Record<string, unknown> });
      results.push({ EventId: randomUUID() });
    }
    c.header("content-type", "application/x-amz-json-1.1");
    return c.body(
      JSON.stringify({ FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results }),
      200,
    );
  });

  app.get("/local/events", (c) =>
    c.json({
      items: bus.published().map((e) => ({ source: e.source, detailType: e.detailType, detail: e.detail, time: e.time })),
    }),
  );
}
