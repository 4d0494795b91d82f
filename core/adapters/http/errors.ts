/** Maps errors to the api.md error body; internals never reach the caller. */
import type { Context } from "hono";
import { AppError, type ErrorKind } from "../../domain/errors.js";
import * as z from "../../domain/zod.js";
import type { Log } from "../../ports/logger.js";

const STATUS: Record<ErrorKind, 400 | 401 | 404 | 409 | 413 | 429 | 500> = {
  input: 400,
  auth: 401,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  too_many_requests: 429,
  internal: 500,
};

/** A 429's `details.retryAfterSeconds`, which also goes out as the `Retry-After` header. */
function retryAfterOf(err: AppError): number | undefined {
  return err.kind === "too_many_requests" ? err.details?.retryAfterSeconds : undefined;
}

/** Issues named in a 400 `request.invalid`; `details.issueCount` counts them all. */
export const MAX_REPORTED_ISSUES = 10;

export function zodToAppError(e: z.core.$ZodError, where: string): AppError {
  // An unknown key is named itself, not just the object that holds it.
  const issues = e.issues.flatMap((i) => {
    const at = [where, ...i.path.map(String)];
    return i.code === "unrecognized_keys"
      ? i.keys.map((k) => ({ field: [...at, k].join("."), message: "unknown field" }))
      : [{ field: at.join("."), message: i.message }];
  });
  // The first few only: an answer stays small whatever the input (30,000 unknown fields are 30,000 issues).
  const shown = issues.slice(0, MAX_REPORTED_ISSUES);
  const more = issues.length - shown.length;
  const fields = [...new Set(shown.map((i) => i.field))];
  const text = `${shown.map((i) => `${i.field}: ${i.message}`).join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
  return new AppError("input", "request.invalid", `invalid ${where}: ${text}`, { fields, issues: shown, issueCount: issues.length });
}

/**
 * Request input is validated by readBody/readQuery/readId, which raise `input` AppErrors; a zod
 * error that reaches this point came from data the service itself holds (a stored item, a
 * composed value) and is a 500 like any other internal error: its field names stay in the log.
 */
export function errorResponse(c: Context, err: unknown, log: Log) {
  if (err instanceof AppError && err.kind !== "internal") {
    const retryAfter = retryAfterOf(err);
    if (retryAfter !== undefined) c.header("Retry-After", String(retryAfter));
    return c.json(
      { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) } },
      STATUS[err.kind],
    );
  }
  log.error("unhandled error", {
    error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
    ...(err instanceof AppError ? { code: err.code, details: err.details } : {}),
    ...(err instanceof z.ZodError ? { issues: err.issues } : {}),
  });
  return c.json({ error: { code: "internal", message: "internal error" } }, 500);
}
