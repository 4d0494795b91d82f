/** Signed paging cursors (core/adapters/http/cursors.ts) and their key (CURSOR_SECRET). */
import { describe, expect, it } from "vitest";
import { createCursorSeal, LOCAL_CURSOR_SECRET } from "../../core/adapters/http/cursors.js";
import { AppError } from "../../core/domain/errors.js";
import { cursorSecretOf } from "../../core/composition/env.js";

const SECRET = "s".repeat(32);
const inner = Buffer.from(JSON.stringify({ pk: "T#a#P#p", sk: "M#msg_1" })).toString("base64url");

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof AppError ? { kind: e.kind, code: e.code, details: e.details } : String(e);
  }
  return "opened";
};

describe("signed cursors", () => {
  const seal = createCursorSeal(SECRET);

  it("open what the same listing sealed", () => {
    expect(seal.open("messages\na\np\nall", seal.seal("messages\na\np\nall", inner))).toBe(inner);
  });

  it("refuse another listing's, another key's, a tampered and an unsigned cursor with a 400 naming the cursor", () => {
    const sealed = seal.seal("messages\na\np\nall", inner);
    const expected = { kind: "input", code: "cursor.invalid", details: { fields: ["query.cursor"] } };
    expect(refusal(() => seal.open("messages\na\np\nactive", sealed))).toEqual(expected);
    expect(refusal(() => seal.open("messages\nb\np\nall", sealed))).toEqual(expected);
    expect(refusal(() => createCursorSeal("t".repeat(32)).open("messages\na\np\nall", sealed))).toEqual(expected);
    expect(refusal(() => seal.open("messages\na\np\nall", `x${sealed.slice(1)}`))).toEqual(expected);
    expect(refusal(() => seal.open("messages\na\np\nall", `${sealed}A`))).toEqual(expected);
    expect(refusal(() => seal.open("messages\na\np\nall", inner))).toEqual(expected);
    expect(refusal(() => seal.open("messages\na\np\nall", "."))).toEqual(expected);
  });

  it("take their key from CURSOR_SECRET (at least 32 characters); unset, the app's local default", () => {
    expect(cursorSecretOf({ CURSOR_SECRET: ` ${SECRET} ` })).toBe(SECRET);
    expect(cursorSecretOf({})).toBeUndefined();
    expect(() => cursorSecretOf({ CURSOR_SECRET: "short" })).toThrow(/CURSOR_SECRET must be at least 32 characters/);
    expect(LOCAL_CURSOR_SECRET.length).toBeGreaterThanOrEqual(32);
  });
});
