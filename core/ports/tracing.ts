/**
 * The tracing port (docs/deploy.md, "Traces"): what the composition root needs to make the
 * store, event and summarizer calls show up as subsegments of a function's X-Ray trace. The
 * functions that carry no tracer (stacks/handlers.ts, `tracesCalls`) pass none, and nothing changes.
 */
import type { Summarizer } from "./summarizer.js";

export interface Tracing {
  /** The same AWS SDK v3 client, each of its commands now recorded as a subsegment. */
  capture<C extends object>(client: C): C;
  /** The same summarizer, each of its calls recorded as a subsegment named after its provider. */
  summarizer(summarizer: Summarizer): Summarizer;
}
