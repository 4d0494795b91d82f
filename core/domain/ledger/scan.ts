/**
 * The text rules of the evidence ledger (docs/evidence-ledger.md, "The evidence ledger"): the error
 * lines of a tool result, how a command ended, and the rule sentences of a USER message. Pure and
 * linear: each message is read through a bounded window, line by line, with patterns that never
 * backtrack over a long line.
 */
import { LEDGER_LIMITS } from "./model.js";

/** What the rules read of a long text: its start and its end (where a command's verdict sits). */
export function scanWindow(text: string): string {
  const limit = LEDGER_LIMITS.scanChars;
  if (text.length <= limit) return text;
  return `${text.slice(0, limit / 2)}\n${text.slice(text.length - limit / 2)}`;
}

/**
 * A line that reports an error: a word such as `error`, `exception`, `traceback`, `failed`,
 * `fatal`, `panic` or `denied`, an `E123`/`TS2345`-style code, or a test runner's `FAIL`. Lines
 * that only count errors at zero (`0 errors`, `no errors`) do not.
 */
const ERROR_WORD = /\b\w*(?:Error|Exception)\b|\b(?:error|errors|exception|traceback|failed|failure|fatal|panic|denied|segmentation fault|not found|cannot|can't|unable to|no such file|command not found|undefined reference)\b|\b(?:TS|E)\d{3,5}\b|^\s*(?:FAIL|ERR!?|✗|×|✘)\s/i;
const NO_ERROR = /\b(?:0|no|zero|without) (?:errors?|failures?|failed)\b|\berror(?:s)?: 0\b|\bfailed: 0\b/i;

/** The line as the ledger keeps it: blanks collapsed, cut to the limit. */
function clip(line: string, limit: number): string {
  const one = line.replace(/\s+/g, " ").trim();
  return one.length > limit ? `${one.slice(0, limit - 1)}…` : one;
}

/**
 * The first error lines of a tool result (at most {@link LEDGER_LIMITS.errorsPerResult}, each
 * once), each trimmed and cut to its limit.
 *
 * @example errorLines("ok\nsrc/a.ts(3,1): error TS2304: Cannot find name 'x'.") // ["src/a.ts(3,1): error TS2304: Cannot find name 'x'."]
 */
export function errorLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of scanWindow(text).split("\n")) {
    if (out.length >= LEDGER_LIMITS.errorsPerResult) break;
    // Long lines are judged by their start: a minified bundle is not read whole.
    const line = raw.length > 1000 ? raw.slice(0, 1000) : raw;
    if (line.trim().length < 4 || !ERROR_WORD.test(line) || NO_ERROR.test(line)) continue;
    const kept = clip(line, LEDGER_LIMITS.errorChars);
    if (!out.includes(kept)) out.push(kept);
  }
  return out;
}

/**
 * Whether a read's result is a failure rather than a file's contents: its first line starts with
 * an error (`Error: ENOENT …`, `File not found`); error words inside a file are not errors.
 */
export function readFailed(text: string): boolean {
  const first = text.slice(0, 300).split("\n", 1)[0] ?? "";
  return /^\s*(?:\w*error\b|fatal\b|exception\b|traceback\b|no such file|permission denied|(?:file )?not found\b|cannot\b|failed\b)/i.test(first);
}

/**
 * The exit status a result states (`Exit code: 1`, `exit status 2`, `Process exited with code 0`,
 * Codex's `"exit_code": 1`), or null.
 */
export function exitStatus(text: string): number | null {
  const window = scanWindow(text);
  const m = /\b(?:exit(?:ed)?[ _](?:with )?(?:code|status)|exit_code|exitcode|returncode)["']?\s*[:=]?\s*(-?\d{1,3})\b/i.exec(window);
  return m ? Number(m[1]) : null;
}

/**
 * How a command's result ended: `exit N` when it says so, `failed` when the provider flagged it
 * or it shows an error line, else `ok`.
 */
export function outcomeOf(text: string, flaggedError: boolean): { outcome: string; clean: boolean } {
  const status = exitStatus(text);
  if (status !== null) return { outcome: `exit ${status}`, clean: status === 0 && !flaggedError };
  if (flaggedError || errorLines(text).length > 0) return { outcome: "failed", clean: false };
  return { outcome: "ok", clean: true };
}

/** A rule word: never, always, do not / don't, must / must not / mustn't (a cheap first test of a line). */
const RULE_WORD = /\b(?:never|always|do not|don['’]t|must|mustn['’]t)\b/i;
/**
 * A sentence that sets a rule: it opens with the rule word (after "please", "and", "but", "also",
 * "so", "you" or "we"), or tells "you" or "we" what must, never or always happen. "I always liked
 * it" and "it must be nice" state no rule.
 */
const RULE_SENTENCE =
  /^(?:(?:please|and|but|also|so|then|you|we)\s+)*(?:never|always|do not|don['’]t|must|mustn['’]t)\b|(?<!\b(?:when|whenever|if|how|that|what)\s+)\b(?:you|we)\s+(?:must|mustn['’]t|should never|should always|never|always|do not|don['’]t)\b/i;
/**
 * Sentences with a rule word that set no rule, as chat is full of: a guess ("Must be nice", "you
 * must have been tired"), a past ("Never saw it coming"), a comfort or an idiom ("Don't worry",
 * "you never know"), encouragement ("Don't give up", "Don't forget to stay positive"), praise
 * ("You never shy away from a challenge") and a subject left out ("Don't feel like going").
 */
const NO_RULE = new RegExp(
  [
    String.raw`^(?:must(?:['’]ve|\s+be|\s+have)|never\s+(?:\w+ed|saw|thought|knew|had|was|were|been|heard|felt|got|made|seen)|(?:do not|don['’]t)\s+(?:worry|feel|think|know|remember|mind|blame))\b`,
    String.raw`\b(?:you|we)\s+must\s+(?:have\s+)?(?:been|had|\w+ed)\b|\b(?:you|we)\s+never\s+know\b`,
    // Encouragement: what a friend says to keep someone going, or to look after themselves.
    String.raw`(?:^|\b(?:and|but|so|just|please)\s+)(?:do not|don['’]t)\s+(?:give\s+up|quit|lose\s+hope|be\s+(?:afraid|scared|shy|so\s+hard|too\s+hard|hard\s+on)|let\s+(?:anything|anyone|anybody|it|that|them)\s+(?:stop|get|bring)|forget\s+to\s+(?:stay\s+(?:positive|safe|strong|calm|healthy|hydrated|motivated|true)|prepare\s+(?:emotionally|mentally|yourself)|take\s+(?:care|(?:a\s+)?breaks?|time\s+for)|have\s+fun|enjoy|relax|rest|smile|breathe|believe|celebrate|treat\s+yourself|be\s+(?:kind|proud|gentle|yourself|happy|grateful)))\b`,
    // Praise: what "you" always or never do, said of someone's character.
    String.raw`\b(?:you|we)\s+(?:never|always)\s+(?:shy\s+away|fail\s+to|cease\s+to|disappoint|let\s+(?:me|us)\s+down|give\s+up|know\s+how|make\s+me|find\s+a\s+way|seem|look|sound)\b`,
  ].join("|"),
  "i",
);

/**
 * The sentences of a USER message that set a rule (docs/evidence-ledger.md, "The evidence ledger"): at
 * most {@link LEDGER_LIMITS.constraintsPerMessage}, each whitespace-collapsed and cut to its limit.
 * Quoted code and log lines (in fences, or starting with `>`) are not the user's words.
 *
 * @example ruleSentences("Thanks. Never push to main. Run the tests.") // ["Never push to main."]
 */
export function ruleSentences(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const raw of scanWindow(text).split("\n")) {
    if (out.length >= LEDGER_LIMITS.constraintsPerMessage) break;
    if (/^\s*(?:```|~~~)/.test(raw)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || /^\s*>/.test(raw) || !RULE_WORD.test(raw)) continue;
    for (const sentence of raw.split(/(?<=[.!?;])\s+/)) {
      if (out.length >= LEDGER_LIMITS.constraintsPerMessage) break;
      const bare = sentence.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "").replace(/^\W+/, "");
      if (!RULE_SENTENCE.test(bare) || NO_RULE.test(bare)) continue;
      const kept = clip(bare, LEDGER_LIMITS.constraintChars);
      if (kept.length >= 8 && !out.includes(kept)) out.push(kept);
    }
  }
  return out;
}

/**
 * The error lines of a call's result (docs/evidence-ledger.md, "What it keeps"): a command's or
 * another tool's that did not end clean; a read's or a search's only when it failed, since a
 * file's contents or search hits mention errors without being one.
 */
export function resultErrors(reads: boolean, content: string, flagged: boolean): string[] {
  if (reads) return flagged || readFailed(content) ? errorLines(content) : [];
  return outcomeOf(content, flagged).clean ? [] : errorLines(content);
}
