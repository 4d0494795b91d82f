/**
 * The one error type of the service. `kind` decides the HTTP status; only non-internal kinds show
 * their message to callers. `too_many_requests` is a rate or budget of the tenant that resets with time (429).
 */
export type ErrorKind = "input" | "auth" | "not_found" | "conflict" | "too_large" | "too_many_requests" | "internal";

/** One field at fault and what is wrong with it. */
export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * What an error tells a caller beyond its code and message: the `details` of the error body
 * (docs/api.md). `fields` always names the fields at fault, as paths (`body.from`,
 * `softThreshold`); `issues` says what is wrong with each. Other keys carry what a caller can act
 * on: a limit, a retry delay, the ids involved.
 */
export interface ErrorDetails {
  fields?: string[];
  issues?: FieldIssue[];
  limit?: number;
  /** A 429's wait, also sent as the `Retry-After` header. */
  retryAfterSeconds?: number;
  [other: string]: unknown;
}

export class AppError extends Error {
  override readonly name = "AppError";
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `what` names it in the message; `code` (default `what`) is the code's first part, a word without spaces. */
export const notFound = (what: string, id: string, code = what) =>
  new AppError("not_found", `${code}.not_found`, `${what} '${id}' not found`);

/** A write that would recreate a deleted process (docs/api.md, "Deleting a process"). */
export const processDeleted = (processId: string) =>
  new AppError("conflict", "process.deleted", `process '${processId}' was deleted; its id cannot be used again`);

/** An import is still writing the id (docs/api.md, "Export and import"): it goes live at its end, or a DELETE erases it. */
export const processImporting = (processId: string) =>
  new AppError("conflict", "process.importing", `process '${processId}' is being imported; it is live once the import ends (a stopped import is erased with DELETE)`);

export const invalid = (code: string, message: string, details?: ErrorDetails) =>
  new AppError("input", code, message, details);

export const conflict = (code: string, message: string, details?: ErrorDetails) =>
  new AppError("conflict", code, message, details);

/**
 * A write the store refused because the item would outgrow what it can hold (DynamoDB's 400 KB).
 * Callers turn it into their own answer (a 413 `message.too_large`, a FAILED memory, a skipped
 * write); it reaches an HTTP caller, if at all, as a 413, never a 500.
 */
export const itemTooLarge = (message: string, cause?: unknown) =>
  new AppError("too_large", "store.item_too_large", message, undefined, cause === undefined ? undefined : { cause });

export const isItemTooLarge = (e: unknown): e is AppError => e instanceof AppError && e.code === "store.item_too_large";

/** Runs a write; the store's refusal of an item for its size comes back as null. */
export async function unlessTooLarge<T>(write: Promise<T>): Promise<T | null> {
  try {
    return await write;
  } catch (e) {
    if (isItemTooLarge(e)) return null;
    throw e;
  }
}
