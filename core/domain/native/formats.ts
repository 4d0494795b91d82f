/**
 * The provider formats a message's native content may be in, and the formats a turn's replay can
 * be asked in (docs/api.md, "Native content").
 */
import * as z from "../zod.js";

export const NATIVE_FORMATS = ["anthropic", "openai-responses", "gemini", "ai-sdk"] as const;
export const NativeFormat = z.enum(NATIVE_FORMATS);
export type NativeFormat = z.infer<typeof NativeFormat>;

/** `openai-chat` has no native content of its own: Chat Completions keeps no reasoning. */
export const ReplayFormat = z.enum([...NATIVE_FORMATS, "openai-chat"]);
export type ReplayFormat = z.infer<typeof ReplayFormat>;

/** What a model API returned, or an engine sent, for one message: kept and returned exactly. */
export const NativeContent = z.strictObject({ format: NativeFormat, content: z.array(z.unknown()) });
export type NativeContent = z.infer<typeof NativeContent>;

/** A JSON value as parsed from a request body. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
