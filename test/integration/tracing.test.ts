/**
 * X-Ray traces as a Lambda sends them (docs/deploy.md, "Traces"): with the Lambda environment
 * set, the Powertools Tracer sends its segments over UDP to the X-Ray daemon's address, here a
 * socket of the test. One invocation's store call (against DynamoDB Local), event publish and
 * summarizer call arrive as subsegments of the invocation's own subsegment, which carries the
 * tenant and process ids; outside Lambda, or with POWERTOOLS_TRACE_ENABLED=false, nothing is traced.
 */
import { createSocket, type Socket } from "node:dgram";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { createEventBridgePublisher } from "../../core/adapters/events/eventbridge-publisher.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PowertoolsTracing } from "../../core/adapters/tracing/powertools-tracing.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { summarizerError } from "../../core/ports/summarizer.js";
import { upsertProcess } from "../../core/services/processes.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { createMemoryLog } from "../support/memory-log.js";

const TRACE_ROOT = "1-6740c0de-0123456789abcdef01234567";
const HANDLER = "functions/compaction-worker.handler";

interface XrayDocument {
  name: string;
  id: string;
  trace_id?: string;
  parent_id?: string;
  error?: boolean;
  annotations?: Record<string, unknown>;
  aws?: Record<string, unknown>;
  subsegments?: XrayDocument[];
}

/** Every segment document the daemon stand-in got, nested subsegments flattened out. */
const documents: XrayDocument[] = [];
const waiters: Array<() => void> = [];
let daemon: Socket;
const saved: Record<string, string | undefined> = {};
let tracingModule: typeof import("../../core/adapters/tracing/powertools-tracing.js");

const flatten = (doc: XrayDocument): XrayDocument[] => [doc, ...(doc.subsegments ?? []).flatMap(flatten)];

/** A subsegment's parent: named by `parent_id` when sent on its own, else the document it is nested in. */
const parentOf = (doc: XrayDocument) => doc.parent_id ?? documents.find((p) => p.subsegments?.some((s) => s.id === doc.id))?.id;

/** Resolves when a document named `name` has arrived (the SDK sends each one as it closes). */
function arrived(name: string): Promise<XrayDocument> {
  return new Promise((resolve) => {
    const check = () => {
      const found = documents.find((d) => d.name === name);
      if (found) resolve(found);
      else waiters.push(check);
    };
    check();
  });
}

function setEnv(values: Record<string, string | undefined>) {
  for (const [k, v] of Object.entries(values)) {
    if (!(k in saved)) saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

beforeAll(async () => {
  daemon = createSocket("udp4");
  daemon.on("message", (packet) => {
    // Each datagram: a header line, then one JSON segment document.
    const body = packet.toString("utf8").split("\n").slice(1).join("\n");
    documents.push(...flatten(JSON.parse(body) as XrayDocument));
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve) => daemon.bind(0, "127.0.0.1", resolve));
  // What the Lambda runtime sets: the X-Ray SDK reads it when it is first imported.
  setEnv({
    LAMBDA_TASK_ROOT: "/var/task",
    AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x",
    AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
    _X_AMZN_TRACE_ID: `Root=${TRACE_ROOT};Parent=53995c3f42cd8ad8;Sampled=1`,
    _HANDLER: HANDLER,
    POWERTOOLS_TRACE_ENABLED: undefined,
    AWS_XRAY_DEBUG_MODE: undefined,
  });
  tracingModule = await import("../../core/adapters/tracing/powertools-tracing.js");
});

afterAll(() => {
  setEnv(saved);
  daemon?.close();
});

describe("an invocation's trace in Lambda", () => {
  let tracing: PowertoolsTracing;
  let handlerDoc: XrayDocument;

  beforeAll(async () => {
    tracing = tracingModule.createPowertoolsTracing("vancetope-memory");
    const { endpoint, tableName } = await freshTable("trace");
    const summarizer = createFakeSummarizer();
    summarizer.script.push({ ok: true, summary: "s" }, { ok: false, failure: summarizerError("provider_rate_limited", "429") });
    // A bus nobody listens on: the publish fails at once, and its subsegment says so.
    const client = new EventBridgeClient({ region: "eu-west-1", endpoint: "http://127.0.0.1:9", credentials: { accessKeyId: "a", secretAccessKey: "b" }, maxAttempts: 1 });
    const events = createEventBridgePublisher({ busName: "bus", client: tracing.capture(client) });
    const deps = createDeps({ env: { DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: tableName }, tracing, log: createMemoryLog(), summarizerFactory: async () => summarizer, events });
    const event = { "detail-type": "CompactionRequested", detail: { tenantId: "tenant-1", processId: "proc-7", foldId: "f1" } };
    await tracing.invocation(event, async () => {
      await upsertProcess(deps, "tenant-1", "proc-7", { projectId: "proj" });
      await deps.events.publish({ source: "vancetope.memory", detailType: "MemoryCompacted", detail: {} }).catch(() => {});
      const s = await deps.summarizer();
      await s.summarize({ priorSummary: null, messages: [{ id: "m1", role: "USER", content: "hello", createdAt: "2026-01-01T00:00:00Z" }] });
      await s.summarize({ priorSummary: null, messages: [{ id: "m2", role: "USER", content: "again", createdAt: "2026-01-01T00:00:00Z" }] });
    });
    handlerDoc = await arrived(`## ${HANDLER}`);
  });

  it("is on: the Tracer finds the Lambda environment", () => {
    expect(tracing.enabled).toBe(true);
  });

  it("records the invocation in the function's trace, annotated with its tenant, process, service and cold start", () => {
    expect(handlerDoc.trace_id).toBe(TRACE_ROOT);
    expect(handlerDoc.annotations).toEqual({ tenantId: "tenant-1", processId: "proc-7", Service: "vancetope-memory", ColdStart: true });
  });

  it("records each store call as a DynamoDB subsegment of the invocation", async () => {
    await arrived("DynamoDB");
    const calls = documents.filter((d) => d.name === "DynamoDB");
    expect(calls.map(parentOf).every((id) => id === handlerDoc.id)).toBe(true);
    expect(calls.map((d) => d.aws?.operation)).toContain("UpdateItem");
  });

  it("records an event publish as an EventBridge subsegment, flagged when it failed", async () => {
    const put = await arrived("EventBridge");
    expect(parentOf(put)).toBe(handlerDoc.id);
    expect(put.aws?.operation).toBe("PutEvents");
    expect(put.error || (put as { fault?: boolean }).fault).toBe(true);
  });

  it("records each summarizer call with its provider and model, and flags the one that failed", async () => {
    expect(parentOf(await arrived("summarize fake"))).toBe(handlerDoc.id);
    const calls = documents.filter((d) => d.name === "summarize fake");
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => c.annotations)).toEqual([
      { provider: "fake", model: "fake-model" },
      { provider: "fake", model: "fake-model", failure: "provider_rate_limited" },
    ]);
    expect(calls.map((c) => c.error ?? false)).toEqual([false, true]);
  });
});

describe("tracing off", () => {
  it("with POWERTOOLS_TRACE_ENABLED=false hands back the very clients and summarizer it was given and runs the work unwrapped", async () => {
    setEnv({ POWERTOOLS_TRACE_ENABLED: "false" });
    try {
      const tracing = tracingModule.createPowertoolsTracing("vancetope-memory");
      expect(tracing.enabled).toBe(false);
      const client = new EventBridgeClient({ region: "eu-west-1" });
      const summarizer = createFakeSummarizer();
      expect(tracing.capture(client)).toBe(client);
      expect(tracing.summarizer(summarizer)).toBe(summarizer);
      await expect(tracing.invocation({ detail: { processId: "p" } }, async () => 42)).resolves.toBe(42);
    } finally {
      setEnv({ POWERTOOLS_TRACE_ENABLED: undefined });
    }
  });

  it("reads the ids of an HTTP API request and of an event, and leaves out what is not an id", () => {
    const { traceAnnotationsOf } = tracingModule;
    expect(traceAnnotationsOf({ pathParameters: { processId: "p-1" }, requestContext: { authorizer: { lambda: { tenantId: "t-1" } } } })).toEqual({
      tenantId: "t-1",
      processId: "p-1",
    });
    expect(traceAnnotationsOf({ detail: { tenantId: "t-2", processId: "p 2" } })).toEqual({ tenantId: "t-2" });
    expect(traceAnnotationsOf({ detail: { tenantId: { $ne: 1 } } })).toEqual({});
    expect(traceAnnotationsOf(null)).toEqual({});
  });
});
