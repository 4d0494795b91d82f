/** How a service call ended, as a test compares it. */
import { AppError } from "../../core/domain/errors.js";

/**
 * null when the call succeeded; the refusal's `kind` and `code`, plus whatever `more` picks of it,
 * when it threw an AppError; anything else it threw, as thrown.
 */
export const refusal = (p: Promise<unknown>, more?: (e: AppError) => Record<string, unknown>) =>
  p.then(
    () => null,
    (e: unknown) => (e instanceof AppError ? { kind: e.kind, code: e.code, ...more?.(e) } : e),
  );
