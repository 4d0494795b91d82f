/**
 * X-Ray traces through Powertools Tracer (docs/deploy.md, "Traces"): the AWS SDK clients'
 * commands (the store, events, the worker invoke) and the summarizer calls as subsegments, and
 * each invocation in a `## handler` subsegment annotated with its tenant and process. The Tracer
 * turns itself off outside Lambda and when POWERTOOLS_TRACE_ENABLED is `false`: then every method
 * hands back what it was given, and the local runner and the tests run untraced.
 */
import { Tracer } from "@aws-lambda-powertools/tracer";
import { Id } from "../../domain/fields.js";
import type { Summarizer } from "../../ports/summarizer.js";
import type { Tracing } from "../../ports/tracing.js";

/** The ids a trace is annotated with, so X-Ray can find one process's or one tenant's traces. */
export interface TraceAnnotations {
  tenantId?: string;
  processId?: string;
}

export interface PowertoolsTracing extends Tracing {
  readonly enabled: boolean;
  /** Runs one invocation in its own subsegment, annotated with the ids `event` carries. */
  invocation<T>(event: unknown, run: () => Promise<T>): Promise<T>;
}

const field = (value: unknown, key: string): unknown =>
  value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;

/** An id as the API accepts it; anything else (an event from outside may carry anything) is left out. */
const idOf = (value: unknown): string | undefined => (Id.safeParse(value).success ? (value as string) : undefined);

/**
 * The tenant and process of a Lambda event: an HTTP API request (the authorizer's tenant, the
 * `{processId}` path parameter) or an EventBridge-shaped event (`detail.tenantId`, `detail.processId`).
 */
export function traceAnnotationsOf(event: unknown): TraceAnnotations {
  const detail = field(event, "detail");
  const tenantId = idOf(field(detail, "tenantId")) ?? idOf(field(field(field(field(event, "requestContext"), "authorizer"), "lambda"), "tenantId"));
  const processId = idOf(field(detail, "processId")) ?? idOf(field(field(event, "pathParameters"), "processId"));
  return { ...(tenantId ? { tenantId } : {}), ...(processId ? { processId } : {}) };
}

/** One call of the summarizer in a subsegment with its provider and model, and a failure's kind. */
function traceCall<T extends { ok: boolean; failure?: { kind: string } }>(
  tracer: Tracer,
  name: string,
  summarizer: Summarizer,
  call: () => Promise<T>,
): Promise<T> {
  // The X-Ray SDK returns what the function returns; Powertools types it as unknown.
  return tracer.provider.captureAsyncFunc(name, async (subsegment) => {
    subsegment?.addAnnotation("provider", summarizer.provider);
    subsegment?.addAnnotation("model", summarizer.model);
    try {
      const outcome = await call();
      // A summarizer reports provider trouble as a value, not a throw: the trace flags it all the same.
      if (!outcome.ok) {
        subsegment?.addAnnotation("failure", outcome.failure?.kind ?? "unknown");
        subsegment?.addErrorFlag();
      }
      return outcome;
    } catch (e) {
      subsegment?.addError(e as Error);
      throw e;
    } finally {
      subsegment?.close();
    }
  }) as Promise<T>;
}

/**
 * @example
 * const tracing = createPowertoolsTracing(serviceNameOf(process.env));
 * const deps = createSummarizingDeps(process.env, { tracing });
 * export const handler = (event) => tracing.invocation(event, () => work(deps, event));
 */
export function createPowertoolsTracing(serviceName: string, tracer: Tracer = new Tracer({ serviceName })): PowertoolsTracing {
  const enabled = tracer.isTracingEnabled();
  return {
    enabled,
    capture: (client) => (enabled ? (tracer.captureAWSv3Client(client as never) as typeof client) : client),
    summarizer(summarizer) {
      if (!enabled) return summarizer;
      const complete = summarizer.complete?.bind(summarizer);
      return {
        provider: summarizer.provider,
        model: summarizer.model,
        contextWindow: summarizer.contextWindow,
        maxOutputTokens: summarizer.maxOutputTokens,
        summarize: (input) => traceCall(tracer, `summarize ${summarizer.provider}`, summarizer, () => summarizer.summarize(input)),
        ...(complete ? { complete: (request) => traceCall(tracer, `complete ${summarizer.provider}`, summarizer, () => complete(request)) } : {}),
      };
    },
    async invocation(event, run) {
      const parent = enabled ? tracer.getSegment() : undefined;
      if (!parent) return run();
      const subsegment = parent.addNewSubsegment(`## ${process.env._HANDLER ?? "handler"}`);
      tracer.setSegment(subsegment);
      try {
        tracer.annotateColdStart();
        tracer.addServiceNameAnnotation();
        for (const [key, value] of Object.entries(traceAnnotationsOf(event))) tracer.putAnnotation(key, value);
        return await run();
      } catch (e) {
        tracer.addErrorAsMetadata(e as Error);
        throw e;
      } finally {
        subsegment.close();
        tracer.setSegment(parent);
      }
    },
  };
}
