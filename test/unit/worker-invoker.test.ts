import { InvokeCommand } from "@aws-sdk/client-lambda";
import { describe, expect, it } from "vitest";
import { createWorkerInvoker, type LambdaInvoker } from "../../core/adapters/events/worker-invoker.js";
import type { DomainEvent } from "../../core/ports/events.js";

function recorder(statusCode = 202) {
  const sent: InvokeCommand[] = [];
  const client: LambdaInvoker = { send: async (c) => (sent.push(c), { StatusCode: statusCode }) };
  const published: DomainEvent[] = [];
  const next = { publish: async (e: DomainEvent) => void published.push(e) };
  return { sent, client, published, next };
}

describe("createWorkerInvoker", () => {
  it("invokes the worker asynchronously with an EventBridge-shaped payload for CompactionRequested, and passes other events on", async () => {
    const r = recorder();
    const publisher = createWorkerInvoker({ functionName: "stage-worker", next: r.next, client: r.client });
    const request = { source: "vancetope.memory", detailType: "CompactionRequested", detail: { tenantId: "t", processId: "p", foldId: "mem_1" } };
    await publisher.publish(request);
    await publisher.publish({ source: "vancetope.memory", detailType: "MemoryCompacted", detail: { memoryId: "m" } });
    expect(r.sent).toHaveLength(1);
    expect(r.sent[0]!.input.FunctionName).toBe("stage-worker");
    expect(r.sent[0]!.input.InvocationType).toBe("Event");
    expect(JSON.parse(new TextDecoder().decode(r.sent[0]!.input.Payload as Uint8Array))).toEqual({
      source: "vancetope.memory",
      "detail-type": "CompactionRequested",
      detail: request.detail,
    });
    expect(r.published.map((e) => e.detailType)).toEqual(["MemoryCompacted"]);
  });

  it("fails loudly when Lambda does not accept the invoke", async () => {
    const r = recorder(500);
    const publisher = createWorkerInvoker({ functionName: "w", next: r.next, client: r.client });
    await expect(publisher.publish({ source: "vancetope.memory", detailType: "CompactionRequested", detail: {} })).rejects.toThrow(/answered 500/);
  });
});
