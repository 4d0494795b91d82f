/**
 * Context windows of well-known OpenAI and Anthropic models, in tokens. Used for the summarizer's
 * own model and, by the compaction service, for the chat model a caller names without a
 * `contextWindow`. Unknown models get `undefined`: guessing a window would be worse than asking.
 */

import { invalid } from "./errors.js";
import type { FoldUnit } from "./tool-groups.js";

/**
 * Model names and their windows. A name matches exactly, or as a dated snapshot of a listed name
 * (`gpt-4o-2024-08-06`, `gpt-4-0613`, `claude-sonnet-4-5-20250929`, `claude-haiku-4-5@20251001`),
 * never as a prefix: `gpt-4-oh` is not `gpt-4` (docs/turns.md, "The window the turn used"). Windows
 * as the providers' model pages give them (OpenAI's model pages; Anthropic's "Models overview").
 */
export const MODEL_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  // OpenAI
  "gpt-3.5-turbo": 16_385,
  "gpt-3.5-turbo-16k": 16_385,
  "gpt-4": 8_192,
  "gpt-4-32k": 32_768,
  "gpt-4-turbo": 128_000,
  "gpt-4-turbo-preview": 128_000,
  "gpt-4-1106-preview": 128_000,
  "gpt-4-0125-preview": 128_000,
  "gpt-4o": 128_000,
  "gpt-4o-mini": 128_000,
  "chatgpt-4o-latest": 128_000,
  "gpt-4.1": 1_047_576,
  "gpt-4.1-mini": 1_047_576,
  "gpt-4.1-nano": 1_047_576,
  o1: 200_000,
  "o1-mini": 128_000,
  "o1-preview": 128_000,
  o3: 200_000,
  "o3-mini": 200_000,
  "o4-mini": 200_000,
  "gpt-5": 400_000,
  "gpt-5-mini": 400_000,
  "gpt-5-nano": 400_000,
  "gpt-5-chat-latest": 128_000,
  "gpt-5.1": 400_000,
  "gpt-5.1-chat-latest": 128_000,
  "gpt-5.2": 400_000,
  "gpt-5.2-chat-latest": 128_000,
  "gpt-oss-20b": 131_072,
  "gpt-oss-120b": 131_072,
  // Anthropic: the 1M-token window of some models needs a beta header, so 200k is the window a
  // plain request gets. Family names without a date are listed for their dated snapshots.
  "claude-3-haiku": 200_000,
  "claude-3-sonnet": 200_000,
  "claude-3-opus": 200_000,
  "claude-3-opus-latest": 200_000,
  "claude-3-5-sonnet": 200_000,
  "claude-3-5-sonnet-latest": 200_000,
  "claude-3-5-haiku": 200_000,
  "claude-3-5-haiku-latest": 200_000,
  "claude-3-7-sonnet": 200_000,
  "claude-3-7-sonnet-latest": 200_000,
  "claude-sonnet-4": 200_000,
  "claude-sonnet-4-0": 200_000,
  "claude-opus-4": 200_000,
  "claude-opus-4-0": 200_000,
  "claude-opus-4-1": 200_000,
  "claude-sonnet-4-5": 200_000,
  "claude-haiku-4-5": 200_000,
  "claude-opus-4-5": 200_000,
  "claude-2.0": 100_000,
  "claude-2.1": 200_000,
  "claude-instant-1.2": 100_000,
};

/** A snapshot's date: `-2024-08-06` and `-0613` (OpenAI), `-20250929` and `@20250929` (Anthropic, Vertex AI). */
const SNAPSHOT_SUFFIX = /(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-\d{4})$/;

/** The listed name `model` is, itself or as a dated snapshot; `undefined` when it is not listed. */
export function knownModelName(model: string): string | undefined {
  const name = normaliseModelName(model);
  if (!name) return undefined;
  if (Object.hasOwn(MODEL_CONTEXT_WINDOWS, name)) return name;
  const base = name.replace(SNAPSHOT_SUFFIX, "");
  return base !== name && Object.hasOwn(MODEL_CONTEXT_WINDOWS, base) ? base : undefined;
}

/**
 * Context window of `model` in tokens, or `undefined` when the model is not known.
 * Accepts dated snapshots and router-style names.
 *
 * @example contextWindowFor("gpt-4o-mini-2024-07-18") // 128000
 * @example contextWindowFor("anthropic/claude-3-5-haiku-latest") // 200000
 * @example contextWindowFor("gpt-4-oh") // undefined
 */
export function contextWindowFor(model: string): number | undefined {
  const name = knownModelName(model);
  return name === undefined ? undefined : MODEL_CONTEXT_WINDOWS[name];
}

/** "OpenAI/GPT-4o" -> "gpt-4o": routers and gateways prefix names with the vendor. */
function normaliseModelName(model: string): string {
  const trimmed = model.trim().toLowerCase();
  const slash = trimmed.lastIndexOf("/");
  return slash >= 0 ? trimmed.slice(slash + 1) : trimmed;
}

/**
 * OpenAI models `POST /responses/compact` takes: the `model` values its API reference lists
 * (the SDK's `ResponseCompactParams`), by the same prefix rule as the windows. Which models
 * Anthropic compacts is asked of its Models API instead (core/adapters/llm/anthropic-compaction.ts).
 */
const RESPONSES_COMPACTION_MODELS: readonly string[] = [
  "gpt-5.4", "gpt-5.3-chat-latest", "gpt-5.2", "gpt-5.2-chat-latest", "gpt-5.2-pro", "gpt-5.1", "gpt-5.1-codex", "gpt-5.1-mini",
  "gpt-5.1-chat-latest", "gpt-5.1-codex-max", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-chat-latest", "gpt-5-codex", "gpt-5-pro",
  "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o4-mini", "o3", "o3-mini", "o3-pro", "o1", "o1-pro", "gpt-4o", "gpt-4o-mini",
];

/**
 * Whether `/responses/compact` takes `model`.
 *
 * @example supportsResponsesCompaction("gpt-5-2025-08-07") // true
 * @example supportsResponsesCompaction("llama3:8b") // false
 */
export function supportsResponsesCompaction(model: string): boolean {
  const name = normaliseModelName(model);
  return RESPONSES_COMPACTION_MODELS.some((p) => name === p || (name.startsWith(p) && /[-.:@_]/.test(name.charAt(p.length)) && /^-\d{4}-\d{2}-\d{2}$/.test(name.slice(p.length))));
}

/**
 * Window assumed for a summarizer model this registry does not know (typically a local model
 * behind an OpenAI-compatible server), unless SUMMARIZER_CONTEXT_WINDOW says otherwise. Small on
 * purpose: too small costs a few extra compactions, too large makes servers truncate silently.
 */
export const UNKNOWN_MODEL_CONTEXT_WINDOW = 8_192;

/**
 * The largest `model.contextWindow` and `prompt.tokens` a caller may send (docs/reliability.md,
 * "Limits and budgets"): ten times the largest window the registry knows, and so past any real
 * model; a larger figure only buys bigger folds, never a better prompt.
 */
export const MAX_CONTEXT_WINDOW = 10_000_000;
/** The largest `prompt.chars`: {@link MAX_CONTEXT_WINDOW} at 4 chars a token. */
export const MAX_PROMPT_CHARS = 4 * MAX_CONTEXT_WINDOW;

/** The chat model a caller names: a known `name`, or its `contextWindow` (which wins). */
export interface ModelRef {
  provider?: string;
  name?: string;
  contextWindow?: number;
}

/**
 * The window a turn or a compaction works against (docs/turns.md, "The window the turn used"):
 * `source` says where it came from: `request` (`model.contextWindow`), `model` (a known
 * `model.name`, matched as `model`), `setting` (`maxPromptTokens` capped it; `model` still names a
 * matched name).
 */
export interface TurnWindow {
  tokens: number;
  source: "request" | "model" | "setting";
  model?: string;
}

/** The caller's context window: `contextWindow`, else the window of a known `name`; a 400 otherwise. */
export function resolveModelWindow(model: ModelRef): TurnWindow {
  if (model.contextWindow) return { tokens: model.contextWindow, source: "request" };
  const name = model.name === undefined ? undefined : knownModelName(model.name);
  if (name === undefined) {
    throw invalid(
      "model.context_window_required",
      model.name
        ? `model '${model.name}' is not known to the service (only listed names and their dated snapshots are): send model.contextWindow`
        : "send model.name of a known model or model.contextWindow",
      { fields: ["body.model.contextWindow"] },
    );
  }
  return { tokens: MODEL_CONTEXT_WINDOWS[name]!, source: "model", model: name };
}

/** The smaller of the model's window and a `maxPromptTokens` cap (unset or null: no cap). */
export function cappedWindow(window: TurnWindow, maxPromptTokens: number | null | undefined): TurnWindow {
  return maxPromptTokens != null && maxPromptTokens < window.tokens ? { ...window, tokens: maxPromptTokens, source: "setting" } : window;
}

/**
 * What a fold may keep and take, per model (docs/turns.md, "What a fold may keep"), beside the
 * windows so that one table names the models. Anthropic models with preserved thinking and OpenAI
 * models with preserved reasoning check every thinking block or reasoning item against what stood
 * before it when it was issued; a summary the service wrote changed that, so the kept turns lose
 * them (the remedy Anthropic documents, "Compaction and preserved thinking"; OpenAI drops such
 * items on every later request, "Keep the prefix unchanged"). Gemini 3 validates the thought
 * signatures of the current turn, a user message and every step answering it ("Thought
 * Signatures"), so its folds take whole turns and its kept turns go as stored, signatures included.
 */
export interface FoldRules {
  /** `strip`: thinking blocks and reasoning items of assistant turns issued before the replayed summary are left out. */
  reasoningBeforeSummary: "keep" | "strip";
  /** What a fold keeps whole: a tool group (a call and its results), or a whole turn, never the current one. */
  foldUnit: FoldUnit;
  /**
   * Where the summary goes in the `openai-responses` format: before the kept turns, or appended
   * after them, as OpenAI recommends for a custom compaction ("Keep the prefix unchanged").
   */
  summary: "before_kept" | "after_kept";
  /**
   * The `openai-responses` request marks the memory block (stable until the next fold) with an
   * explicit `prompt_cache_breakpoint`: OpenAI's API reference, `prompt_cache_options` ("Supported
   * for gpt-5.6 and later models ... You can add explicit breakpoints to content blocks with
   * prompt_cache_breakpoint"; https://developers.openai.com/api/docs/guides/prompt-caching).
   */
  explicitCacheBreakpoint: boolean;
}

/**
 * Model-name prefixes (matched at a name boundary, like the windows) of the models that check
 * reasoning against its prefix: Anthropic's with preserved thinking, OpenAI's newer reasoning models.
 */
const PREFIX_BOUND_REASONING = ["claude-fable-5", "claude-mythos-5", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "gpt-5", "gpt-6"];

/** Model-name prefixes of the models whose folds end at turn boundaries: Gemini's. */
const TURN_BOUND_FOLDS = ["gemini"];

/** OpenAI's models from gpt-5.6 on (`gpt-5.6…`, `gpt-5.10…`, `gpt-6…`): the ones that take explicit cache breakpoints. */
function openaiFrom56(name: string): boolean {
  const v = /^gpt-(\d+)(?:\.(\d+))?(?![\d])/.exec(name);
  if (!v) return false;
  const [major, minor] = [Number(v[1]), Number(v[2] ?? 0)];
  return major > 5 || (major === 5 && minor >= 6);
}

/** Whether a normalised name is `prefix` or one of its variants (`prefix-…`, `prefix.…`, `prefix@…`). */
const namedBy = (name: string, prefix: string) => name === prefix || (name.startsWith(prefix) && /[-.:@_]/.test(name.charAt(prefix.length)));

/**
 * The fold rules of the model a turn names (by `name`; an unknown or absent name keeps everything
 * and folds by tool groups).
 *
 * @example foldRulesFor("claude-fable-5-1") // { reasoningBeforeSummary: "strip", foldUnit: "tool_group", summary: "before_kept", explicitCacheBreakpoint: false }
 * @example foldRulesFor("gemini-3-pro") // { reasoningBeforeSummary: "keep", foldUnit: "turn", summary: "before_kept", explicitCacheBreakpoint: false }
 */
export function foldRulesFor(model: string | undefined): FoldRules {
  const name = model ? normaliseModelName(model) : "";
  const bound = PREFIX_BOUND_REASONING.some((p) => namedBy(name, p));
  return {
    reasoningBeforeSummary: bound ? "strip" : "keep",
    foldUnit: TURN_BOUND_FOLDS.some((p) => namedBy(name, p)) ? "turn" : "tool_group",
    summary: bound && modelFamily(name) === "openai" ? "after_kept" : "before_kept",
    explicitCacheBreakpoint: openaiFrom56(name),
  };
}

/**
 * The vendor families whose models read each other's compaction blocks: a provider fold's block
 * is replayed only to a model of the family that wrote it (docs/turns.md, "The provider's block").
 * Matched by prefix at a name boundary, like the windows.
 */
const MODEL_FAMILIES: ReadonlyArray<readonly [family: string, prefixes: readonly string[]]> = [
  ["claude", ["claude"]],
  ["openai", ["gpt", "chatgpt", "codex", "o1", "o3", "o4"]],
  ["gemini", ["gemini"]],
];

/**
 * The family of a model name (router-style names included), or undefined for a name no family claims.
 *
 * @example modelFamily("anthropic/claude-fable-5-1") // "claude"
 */
export function modelFamily(model: string | undefined): string | undefined {
  const name = model ? normaliseModelName(model) : "";
  return MODEL_FAMILIES.find(([, prefixes]) => prefixes.some((p) => namedBy(name, p)))?.[0];
}
