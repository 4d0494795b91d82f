/**
 * Reads and validates request input at the boundary: size first, then JSON, then the schema. The
 * size is checked on the declared Content-Length and again while the body streams in, so a body
 * without one (chunked) is refused as soon as it passes the limit, never buffered whole first.
 */
import type { Context } from "hono";
import type * as z from "../../domain/zod.js";
import { AppError, invalid } from "../../domain/errors.js";
import { Id } from "../../domain/fields.js";
import { MAX_BODY_BYTES } from "./schemas.js";
import { zodToAppError } from "./errors.js";

export async function readBody<S extends z.ZodMiniType>(c: Context, schema: S, limit = MAX_BODY_BYTES): Promise<z.infer<S>> {
  const raw = await readBytes(c, limit);
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

/** The body as UTF-8 text, within the same size limit (an NDJSON import) or `limit`. */
export async function readText(c: Context, limit = MAX_BODY_BYTES): Promise<string> {
  const raw = await readBytes(c, limit);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw invalid("request.malformed_text", "request body is not valid UTF-8", { fields: ["body"] });
  }
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

/** The body's bytes within `limit`: the declared length first, then what streams in. */
async function readBytes(c: Context, limit: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > limit) throw tooLarge(declared, limit);
  return readLimited(c.req.raw.body, limit);
}

/** The body's bytes, read chunk by chunk; past `limit` the rest is cancelled, not read. */
async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(total, limit, "at least ");
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

const tooLarge = (bytes: number, limit: number, atLeast = "") =>
  new AppError("too_large", "request.too_large", `request body is ${atLeast}${bytes} bytes; the limit is ${limit}`, { limit });
