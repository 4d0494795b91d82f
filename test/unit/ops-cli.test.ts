/**
 * `npm run ops -- redrive` over a queue stand-in (docs/operations.md, "Redrive"): both shapes the
 * stage's dead-letter queue holds are read, each message goes back to the function it failed in
 * and leaves the queue, messages of other stages or unreadable ones stay (visible again), a dry
 * run moves nothing, and `--max` is checked at its limit.
 */
import { describe, expect, it } from "vitest";
import { readDeadLetter } from "../../core/adapters/events/dead-letters.js";
import { dlqNamePrefix, MAX_REDRIVE, runOpsCli } from "../../scripts/ops.js";
import { createMemoryDeadLetterQueue } from "../support/memory-dead-letter-queue.js";

const WORKER = "arn:aws:lambda:eu-west-1:123456789012:function:team-a-vancetope-memory-Events-CompactionWorker0A1B-xyz:$LATEST";
const PLAN_HANDLER = "arn:aws:lambda:eu-west-1:123456789012:function:team-a-vancetope-memory-Events-PlanCompletedHandler-abc";
const OTHER_STAGE = "arn:aws:lambda:eu-west-1:123456789012:function:team-b-vancetope-memory-Events-CompactionWorker-q";

const request = { source: "vancetope.memory", "detail-type": "CompactionRequested", detail: { tenantId: "t", processId: "p", foldId: "f1", mode: "HARD", job: "prepare" } };
const planEvent = { version: "0", id: "e1", "detail-type": "PlanCompleted", source: "vancetope.plan", account: "210987654321", detail: { tenantId: "t", processId: "p" } };

/** What Lambda's failure destination writes for an asynchronous invocation that failed every retry. */
const invocationRecord = (functionArn: string, payload: unknown) => ({
  version: "1.0",
  requestContext: { requestId: "r", functionArn, condition: "RetriesExhausted", approximateInvokeCount: 3 },
  requestPayload: payload,
  responsePayload: { errorType: "ConflictError", errorMessage: "process 'p' is being compacted" },
});

const QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/team-a-vancetope-memory-Events-EventsDlq8C3E1F2A-Xy12AbCd";

/** Runs the command over a queue stand-in that exists under QUEUE_URL (and is listed under the stage's prefix). */
function run(argv: string[], fill: (q: ReturnType<typeof createMemoryDeadLetterQueue>) => void = () => {}, queues = [QUEUE_URL]) {
  const queue = createMemoryDeadLetterQueue();
  fill(queue);
  const out: string[] = [];
  const err: string[] = [];
  const invoked: Array<{ target: string; event: unknown }> = [];
  const opened: string[] = [];
  const done = runOpsCli(argv, {
    env: {},
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    queue: (url) => (opened.push(url), queue),
    listQueues: async (prefix) => queues.filter((u) => u.split("/").at(-1)!.startsWith(prefix)),
    redeliver: async (target, event) => void invoked.push({ target, event }),
  });
  return done.then((code) => ({ code, out, err, invoked, queue, opened }));
}

describe("reading a dead letter", () => {
  it("reads Lambda's invocation record: the function, the original event and why it failed", () => {
    expect(readDeadLetter({ body: JSON.stringify(invocationRecord(WORKER, request)), attributes: {} })).toEqual({
      target: WORKER,
      event: request,
      error: "process 'p' is being compacted",
    });
  });

  it("reads EventBridge's undeliverable event: the event itself, the target from TARGET_ARN", () => {
    const attributes = { TARGET_ARN: PLAN_HANDLER, ERROR_CODE: "SDK_CLIENT_ERROR", ERROR_MESSAGE: "Lambda throttled" };
    expect(readDeadLetter({ body: JSON.stringify(planEvent), attributes })).toEqual({ target: PLAN_HANDLER, event: planEvent, error: "Lambda throttled" });
  });

  it("calls anything else unreadable, with the reason", () => {
    expect(readDeadLetter({ body: "not json", attributes: {} })).toEqual({ unreadable: "the body is not JSON" });
    expect(readDeadLetter({ body: JSON.stringify(planEvent), attributes: {} })).toMatchObject({ unreadable: expect.stringContaining("TARGET_ARN") });
    expect(readDeadLetter({ body: "[1]", attributes: { TARGET_ARN: PLAN_HANDLER } })).toMatchObject({ unreadable: expect.any(String) });
  });
});

describe("npm run ops -- redrive", () => {
  it("sends each message back to its function, deletes it, and keeps other stages' and unreadable ones visible", async () => {
    const r = await run(["redrive", "--stage", "team-a"], (q) => {
      q.push(invocationRecord(WORKER, request));
      q.push(planEvent, { TARGET_ARN: PLAN_HANDLER });
      q.push(invocationRecord(OTHER_STAGE, request));
      q.push("garbage");
    });
    expect(r.invoked).toEqual([
      { target: WORKER, event: request },
      { target: PLAN_HANDLER, event: planEvent },
    ]);
    expect(r.code).toBe(1);
    expect(r.out.at(-1)).toBe("redriven: 2, kept in the queue: 2");
    expect(r.out).toContainEqual(expect.stringContaining(`kept (${OTHER_STAGE} is not a function of this stage)`));
    // What stays can be read again at once (it is not left hidden).
    const again = await r.queue.receive(10);
    expect(again.map((l) => l.body)).toEqual([JSON.stringify(invocationRecord(OTHER_STAGE, request)), "garbage"]);
  });

  it("redrives only functions of the stage's own stack in the queue's account and region, a longer stage name or a shorter prefix not", async () => {
    const fn = (account: string, region: string, name: string) => `arn:aws:lambda:${region}:${account}:function:${name}`;
    const strangers = [
      fn("123456789012", "eu-west-1", "team-a-attacker-fn"),
      fn("123456789012", "eu-west-1", "team-ab-vancetope-memory-Events-CompactionWorker-q"),
      fn("999999999999", "eu-west-1", "team-a-vancetope-memory-Events-CompactionWorker-q"),
      fn("123456789012", "us-east-1", "team-a-vancetope-memory-Events-CompactionWorker-q"),
    ];
    const r = await run(["redrive", "--stage", "team-a"], (q) => {
      for (const target of strangers) q.push(invocationRecord(target, request));
      q.push(invocationRecord(WORKER, request));
    });
    expect(r.invoked).toEqual([{ target: WORKER, event: request }]);
    expect(r.out.at(-1)).toBe("redriven: 1, kept in the queue: 4");
    const short = await run(["redrive", "--stage", "team", "--queue-url", QUEUE_URL], (q) => q.push(invocationRecord(strangers[1]!, request)));
    expect(short.invoked).toEqual([]);
  });

  it("prints a letter's text with its control characters escaped", async () => {
    const record = { ...invocationRecord(WORKER, request), responsePayload: { errorType: "E", errorMessage: "\u001b[2J\u001b[32mall good\u0007" } };
    const r = await run(["redrive", "--stage", "team-a"], (q) => {
      q.push(record);
      q.push("\u001b]0;title\u0007garbage");
    });
    expect(r.out.join("\n")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(r.out.join("\n")).toContain("\\u001b[2J");
  });

  it("with --dry-run lists what would move and moves nothing", async () => {
    const r = await run(["redrive", "--stage", "team-a", "--dry-run"], (q) => {
      q.push(invocationRecord(WORKER, request));
      q.push(planEvent, { TARGET_ARN: PLAN_HANDLER });
    });
    expect(r.code).toBe(0);
    expect(r.invoked).toEqual([]);
    expect(r.out).toEqual([
      `queue: ${QUEUE_URL}`,
      `would redrive CompactionRequested -> ${WORKER} (failed with: process 'p' is being compacted)`,
      `would redrive PlanCompleted -> ${PLAN_HANDLER}`,
      "would redrive: 2, kept in the queue: 0",
    ]);
    expect(await r.queue.receive(10)).toHaveLength(2);
  });

  it("moves at most --max messages, and takes --max up to its limit and not one past it", async () => {
    const three = (q: ReturnType<typeof createMemoryDeadLetterQueue>) => {
      for (let i = 0; i < 3; i++) q.push(invocationRecord(WORKER, { ...request, detail: { ...request.detail, foldId: `f${i}` } }));
    };
    const two = await run(["redrive", "--stage", "team-a", "--max", "2"], three);
    expect(two.invoked.map((i) => (i.event as typeof request).detail.foldId)).toEqual(["f0", "f1"]);
    expect(two.queue.held()).toHaveLength(1);
    const atLimit = await run(["redrive", "--stage", "team-a", "--max", String(MAX_REDRIVE)], three);
    expect(atLimit.code).toBe(0);
    expect(atLimit.invoked).toHaveLength(3);
    for (const bad of [String(MAX_REDRIVE + 1), "0", "ten"]) {
      const past = await run(["redrive", "--stage", "team-a", "--max", bad], three);
      expect(past.code, bad).toBe(2);
      expect(past.err[0], bad).toContain(`--max must be a whole number from 1 to ${MAX_REDRIVE}, got '${bad}'`);
      expect(past.invoked).toEqual([]);
      expect(past.queue.held()).toHaveLength(3);
    }
  });

  it("finds the stage's queue by its name, or takes the one --queue-url names", async () => {
    expect(dlqNamePrefix("team-a")).toBe("team-a-vancetope-memory-Events-EventsDlq");
    const byStage = await run(["redrive", "--stage", "team-a"]);
    expect(byStage.opened).toEqual([QUEUE_URL]);
    const url = "https://sqs.eu-west-1.amazonaws.com/123456789012/some-queue";
    const byUrl = await run(["redrive", "--stage", "team-b", "--queue-url", url], (q) => q.push(invocationRecord(OTHER_STAGE, request)));
    expect(byUrl.opened).toEqual([url]);
    expect(byUrl.invoked).toEqual([{ target: OTHER_STAGE, event: request }]);
  });

  it("refuses a command line without a stage or queue, a stage whose queue it cannot tell, or an unknown command (exit 2)", async () => {
    expect((await run(["redrive"])).err[0]).toContain("--stage is required");
    const none = await run(["redrive", "--stage", "team-c"]);
    expect(none.code).toBe(2);
    expect(none.err[0]).toContain("0 queues are named team-c-vancetope-memory-Events-EventsDlq…; name the stage's queue with --queue-url");
    expect(none.opened).toEqual([]);
    const unknown = await run(["purge", "--stage", "team-a"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err[0]).toContain("unknown command 'purge'");
  });
});
