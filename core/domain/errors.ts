/**
 * The one error type of the service. `kind` decides the HTTP status; only non-internal kinds show
 * their message to callers. `limit` is a limit of the tenant's that resets with time (429).
 */
export type ErrorKind = "input" | "auth" | "not_found" | "conflict" | "too_large" | "limit" | "internal";

export class AppError extends Error {
  override readonly name = "AppError";
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const notFound = (what: string, id: string) =>
  new AppError("not_found", `${what}.not_found`, `${what} '${id}' not found`);

export const invalid = (code: string, message: string, details?: unknown) =>
  new AppError("input", code, message, details);

export const conflict = (code: string, message: string, details?: unknown) =>
  new AppError("conflict", code, message, details);
