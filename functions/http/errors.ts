/** Maps errors to the api.md error body; internals never reach the caller. */
import type { Context } from "hono";
import { ZodError } from "zod";
import { AppError, type ErrorKind } from "../../core/domain/errors.js";
import type { Log } from "../../core/ports/logger.js";

const STATUS: Record<ErrorKind, 400 | 401 | 404 | 409 | 413 | 500> = {
  input: 400,
  auth: 401,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  internal: 500,
};

export function zodToAppError(e: ZodError, where: string): AppError {
  // An unknown key is named itself, not just the object that holds it.
  const issues = e.issues.flatMap((i) => {
    const at = [where, ...i.path.map(String)];
    return i.code === "unrecognized_keys"
      ? i.keys.map((k) => ({ field: [...at, k].join("."), message: "unknown field" }))
      : [{ field: at.join("."), message: i.message }];
  });
  const fields = [...new Set(issues.map((i) => i.field))];
  return new AppError("input", "request.invalid", `invalid ${where}: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, {
    fields,
    issues,
  });
}

export function errorResponse(c: Context, err: unknown, log: Log) {
  const e = err instanceof ZodError ? zodToAppError(err, "input") : err;
  if (e instanceof AppError && e.kind !== "internal") {
    return c.json(
      { error: { code: e.code, message: e.message, ...(e.details !== undefined ? { details: e.details } : {}) } },
      STATUS[e.kind],
    );
  }
  log.error("unhandled error", { error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
  return c.json({ error: { code: "internal", message: "internal error" } }, 500);
}
