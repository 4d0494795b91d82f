/**
 * Signed paging cursors (docs/api.md, "Paging"). A listing hands out the store's cursor with an
 * HMAC-SHA256 of it and of the listing it belongs to (tenant, route, process, view or project),
 * keyed by the stage's `CURSOR_SECRET`; a cursor comes back in only if the HMAC matches that same
 * listing. A malformed, tampered or foreign cursor is therefore a 400 `cursor.invalid` at the
 * boundary: it never reaches DynamoDB (where a forged start key was a 500) and never opens
 * another tenant's, process's or view's pages.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { invalid } from "../../domain/errors.js";

/** The local runner's and the tests' key, used when CURSOR_SECRET is unset (docs/configuration.md, "Environment"). */
export const LOCAL_CURSOR_SECRET = "vancetope-memory-local-cursor-secret-not-for-production";

export interface CursorSeal {
  /** `cursor` as handed out by the listing `scope`. */
  seal(scope: string, cursor: string): string;
  /** The store's cursor inside `sealed`, if `scope` handed it out; else a 400 naming the cursor. */
  open(scope: string, sealed: string): string;
}

const badCursor = () => invalid("cursor.invalid", "cursor is not valid for this listing", { fields: ["query.cursor"] });

export function createCursorSeal(secret: string): CursorSeal {
  const mac = (scope: string, cursor: string) =>
    createHmac("sha256", secret).update(scope).update("\n").update(cursor).digest("base64url");
  return {
    // The store's cursors are base64url, which has no ".": the last one separates the HMAC.
    seal: (scope, cursor) => `${cursor}.${mac(scope, cursor)}`,
    open(scope, sealed) {
      const dot = sealed.lastIndexOf(".");
      if (dot <= 0) throw badCursor();
      const cursor = sealed.slice(0, dot);
      const given = Buffer.from(sealed.slice(dot + 1));
      const expected = Buffer.from(mac(scope, cursor));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badCursor();
      return cursor;
    },
  };
}

/** The page with its cursor sealed for `scope`. */
export const sealPage = <P extends { nextCursor?: string }>(seal: CursorSeal, scope: string, page: P): P =>
  page.nextCursor ? { ...page, nextCursor: seal.seal(scope, page.nextCursor) } : page;
