/**
 * How late a worker job or an event can still arrive (docs/reliability.md, "Late deliveries"):
 * Lambda's asynchronous queue holds an invocation up to 6 hours, then the dead-letter queue keeps
 * it 14 days, from which a redrive delivers it again. Anything that must still be found by such a
 * delivery lives longer than both.
 */
export const LATEST_DELIVERY_DAYS = 15;

export const LATEST_DELIVERY_MS = LATEST_DELIVERY_DAYS * 86_400_000;
