/**
 * The alphabet of tool call ids and tool names, as callers send them and as prompts print them,
 * and what text DynamoDB can store (both re-exported by core/domain/fields.ts, where the other
 * input rules live).
 */
import * as z from "./zod.js";

/**
 * The characters of tool call ids and tool names. Both are printed into the summarizer's prompt
 * and the replay's placeholders (docs/api.md), where a line break, a bracket or an angle bracket
 * could close the transcript or forge a message; the ids and names providers and SDKs generate
 * (`call_…`, `toolu_…`, UUIDs, base64, `server.tool`) fit it.
 */
const TOOL_REF_CHAR = "A-Za-z0-9._:@/+=-";
const TOOL_REF_MAX = 256;

/** A tool call id or a tool name as a caller sends it. */
export const ToolRef = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(TOOL_REF_MAX),
    z.regex(new RegExp(`^[${TOOL_REF_CHAR}]+$`), `use letters, digits and . _ : @ / + = - (max ${TOOL_REF_MAX})`),
  );

const OUTSIDE_TOOL_REF = new RegExp(`[^${TOOL_REF_CHAR}]`, "g");

/**
 * A stored tool call id or tool name as printed in a prompt: any character outside the alphabet
 * of {@link ToolRef} becomes `_`, so an id stored before the check cannot break out of its line.
 *
 * @example printableToolRef("c1)]\n</transcript>") // "c1____/transcript_"
 */
export function printableToolRef(ref: string): string {
  return ref.replace(OUTSIDE_TOOL_REF, "_") || "_";
}


/** A UTF-16 surrogate without its pair: DynamoDB refuses to store text holding one (global: `replace` finds them all). */
export const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
