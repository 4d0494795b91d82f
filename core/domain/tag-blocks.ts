/**
 * Tag blocks of a model answer (`<summary>…</summary>`, `<think>…</think>`), found in linear time
 * (docs/reliability.md, "Linear time on any input"). The regular expression
 * `/<(names)\b[^>]*>[\s\S]*?<\/\1\s*>/gi` finds the same blocks, but it scans the rest of the
 * answer for a closing tag from every opening tag that has none, and for a `>` from every opening
 * tag cut off before one: an answer of many such tags takes quadratic time. Pure, no I/O.
 */

export interface TagBlock {
  /** Where the opening tag starts. */
  start: number;
  /** Where the content starts (after the opening tag's `>`) and ends (at the closing tag). */
  innerStart: number;
  innerEnd: number;
  /** Just after the closing tag's `>`. */
  end: number;
}

const alternation = (names: readonly string[]) => names.join("|");

/**
 * The blocks of `text` opened by one of `names` and closed by the same name (any case), in order
 * and not overlapping: exactly the matches of `/<(names)\b[^>]*>[\s\S]*?<\/\1\s*>/gi`.
 *
 * @example tagBlocks("a<think>x</think>b", ["think"]) // [{ start: 1, innerStart: 8, innerEnd: 9, end: 17 }]
 */
export function tagBlocks(text: string, names: readonly string[]): TagBlock[] {
  // Every closing tag, by name: they cannot overlap (each holds one `<`).
  const closings = new Map<string, Array<{ start: number; end: number }>>();
  for (const m of text.matchAll(new RegExp(`<\\/(${alternation(names)})\\s*>`, "gi"))) {
    const name = m[1]!.toLowerCase();
    const list = closings.get(name) ?? [];
    list.push({ start: m.index, end: m.index + m[0].length });
    closings.set(name, list);
  }
  const next = new Map<string, number>(); // per name, the first closing tag not yet passed
  const blocks: TagBlock[] = [];
  let from = 0;
  let gt = -1; // the first `>` at or after the position last asked for
  for (const m of text.matchAll(new RegExp(`<(${alternation(names)})\\b`, "gi"))) {
    if (m.index < from) continue;
    const afterName = m.index + m[0].length;
    if (gt < afterName) gt = text.indexOf(">", afterName);
    if (gt < 0) break; // no `>` left: no later opening tag ends either
    const name = m[1]!.toLowerCase();
    const list = closings.get(name) ?? [];
    let k = next.get(name) ?? 0;
    while (k < list.length && list[k]!.start <= gt) k++;
    next.set(name, k);
    const closing = list[k];
    if (!closing) continue;
    blocks.push({ start: m.index, innerStart: gt + 1, innerEnd: closing.start, end: closing.end });
    from = closing.end;
  }
  return blocks;
}

/** Whether `text` holds a complete opening tag of one of `names`: `/<(names)\b[^>]*>/i.test(text)`. */
export function hasOpeningTag(text: string, names: readonly string[]): boolean {
  const first = text.search(new RegExp(`<(?:${alternation(names)})\\b`, "i"));
  return first >= 0 && text.indexOf(">", first) >= 0;
}

/** `text` without the blocks. */
export function withoutBlocks(text: string, blocks: readonly TagBlock[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const b of blocks) {
    parts.push(text.slice(at, b.start));
    at = b.end;
  }
  parts.push(text.slice(at));
  return parts.join("");
}
