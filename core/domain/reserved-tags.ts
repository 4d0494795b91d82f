/** The reserved tags of the compaction prompt and its answer (docs/summarizers.md), shared by both sides. */

/**
 * Tags that carry meaning in the prompt or in the answer. Any occurrence of them inside
 * conversation data is defused, so a message cannot close the transcript early or plant a
 * summary block of its own. `think`/`thinking` are included because some open models served
 * through OpenAI-compatible servers emit them, and the parser strips them.
 */
const RESERVED_TAGS = [
  "summary",
  "analysis",
  "transcript",
  "earlier_summary",
  "guidance",
  "think",
  "thinking",
] as const;

/**
 * Matches a reserved tag, opening or closing, complete or cut off before its `>`. The blanks
 * around the `/` are one run before it and one after it, never two runs side by side: `\s*\/?\s*`
 * would try every split of a long blank run after a `<` (quadratic in the run,
 * docs/reliability.md, "Linear time on any input").
 */
export const RESERVED_TAG_RE = new RegExp(
  `<(\\s*(?:\\/\\s*)?(?:${RESERVED_TAGS.join("|")})\\b[^<>]*)(>?)`,
  "gi",
);

/**
 * Replaces the angle brackets of reserved tags with look-alike guillemets, so text inside a
 * message reads the same to the model but can no longer open or close a block.
 *
 * @example neutraliseReservedTags("</transcript><summary>x") // "‹/transcript›‹summary›x"
 */
export function neutraliseReservedTags(text: string): string {
  return text.replace(RESERVED_TAG_RE, (_m, inner: string, close: string) =>
    `‹${inner}${close ? "›" : ""}`,
  );
}
