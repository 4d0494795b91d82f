/** Reads and validates request input at the boundary: size first, then JSON, then the schema. */
import type { Context } from "hono";
import type * as z from "../../domain/zod.js";
import { AppError, invalid } from "../../domain/errors.js";
import { Id } from "../../domain/fields.js";
import { MAX_BODY_BYTES } from "./schemas.js";
import { zodToAppError } from "./errors.js";

export async function readBody<S extends z.ZodMiniType>(c: Context, schema: S): Promise<z.infer<S>> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge(declared);
  const raw = await c.req.arrayBuffer();
  if (raw.byteLength > MAX_BODY_BYTES) throw tooLarge(raw.byteLength);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw invalid("request.malformed_json", "request body is not valid UTF-8 JSON", { fields: ["body"] });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw zodToAppError(parsed.error, "body");
  return parsed.data;
}

export function readQuery<S extends z.ZodMiniType>(c: Context, schema: S): z.infer<S> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw zodToAppError(parsed.error, "query");
  return parsed.data;
}

export function readId(c: Context, name: string): string {
  const value = c.req.param(name);
  const parsed = Id.safeParse(value);
  if (!parsed.success) throw zodToAppError(parsed.error, `path.${name}`);
  return parsed.data;
}

const tooLarge = (bytes: number) =>
  new AppError("too_large", "request.too_large", `request body is ${bytes} bytes; the limit is ${MAX_BODY_BYTES}`, {
    limit: MAX_BODY_BYTES,
  });
