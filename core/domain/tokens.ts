/**
 * Token estimation: the cheap chars/4 heuristic (the default everywhere), and an exact
 * tokenizer for OpenAI model families that the composition root may opt into.
 */

/** The cheap heuristic: about four characters per token (docs/compaction.md, "Modes and thresholds"). */
export const CHARS_PER_TOKEN = 4;

/**
 * Added to every message on top of its text: chat formats wrap each message in role markers and
 * separators (OpenAI's documented overhead is 3-4 tokens per message), so a long run of short
 * messages must not look free.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * chars/4, rounded up. Characters are UTF-16 code units (`string.length`), the same unit a client
 * reports in `prompt.chars`.
 *
 * @example estimateTokens("hello") // 2
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** The parts of a message that reach the model. */
export interface TokenCountable {
  content: string;
  toolCalls?: readonly { name: string; arguments: string }[] | undefined;
}

/** Characters a message sends to the model: content plus each tool call's name and arguments. */
export function messageChars(message: TokenCountable): number {
  let chars = message.content.length;
  for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length;
  return chars;
}

export type CountTokens = (text: string) => number;

/**
 * Tokens of one message: content + tool-call names + arguments, each counted with `count`
 * (chars/4 by default), plus {@link MESSAGE_OVERHEAD_TOKENS}.
 */
export function messageTokens(message: TokenCountable, count: CountTokens = estimateTokens): number {
  let tokens = count(message.content) + MESSAGE_OVERHEAD_TOKENS;
  for (const call of message.toolCalls ?? []) tokens += count(call.name) + count(call.arguments);
  return tokens;
}

export type TokenEncoding = "chars/4" | "o200k_base" | "cl100k_base";

export interface TokenCounter {
  readonly encoding: TokenEncoding;
  /** True for a real tokenizer; false for the chars/4 estimate. */
  readonly exact: boolean;
  count(text: string): number;
}

/** The default counter: chars/4. */
export const charsPerTokenCounter: TokenCounter = {
  encoding: "chars/4",
  exact: false,
  count: estimateTokens,
};

/**
 * The tiktoken encoding of a known OpenAI model family, or null. A provider prefix
 * (`openai/gpt-4o`) is ignored.
 */
export function encodingForModel(model?: string): Exclude<TokenEncoding, "chars/4"> | null {
  if (model === undefined) return null;
  const name = model.trim().toLowerCase().replace(/^.*\//, "");
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4|codex)/.test(name)) {
    return "o200k_base";
  }
  if (/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/.test(name)) return "cl100k_base";
  return null;
}

/**
 * A counter for `model`: exact for known OpenAI families, chars/4 otherwise. Async because the
 * BPE tables (2.4 MB for o200k) are imported only when asked for, keeping them out of every cold
 * start that does not need them; call it once per container.
 */
export async function createTokenCounter(model?: string): Promise<TokenCounter> {
  const encoding = encodingForModel(model);
  if (encoding === null) return charsPerTokenCounter;
  const tokenizer =
    encoding === "o200k_base"
      ? await import("gpt-tokenizer/encoding/o200k_base")
      : await import("gpt-tokenizer/encoding/cl100k_base");
  // Chat text may contain "<|endoftext|>" and the like; they are counted as text, never rejected.
  const options = { disallowedSpecial: new Set<string>() };
  return { encoding, exact: true, count: (text) => tokenizer.countTokens(text, options) };
}
