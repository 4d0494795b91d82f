/**
 * Real coding-agent sessions in their native formats, for the native-content benchmark
 * (docs/benchmarks.md, "Native content"). The files are never in the repository: `AGENT_SESSIONS_DIR`
 * names the folder that holds them (default `data/agent-sessions/`, git-ignored), with the layout
 * `codex-rollout/*.jsonl` and `specstory/*.md`. `npm test` never reads them.
 *
 * - A Codex CLI rollout is replayed as the Responses API items it recorded: the items of one model
 *   response (reasoning, assistant message, function and custom tool calls, and any other item the
 *   model produced) are one ASSISTANT message, each call's output is one TOOL message, and the
 *   consecutive user (or developer) input messages of one turn are one USER (or SYSTEM) message.
 * - A SpecStory Markdown v2 transcript of Claude Code becomes an Anthropic session: its thought
 *   processes become thinking blocks with made-up signatures of realistic size (Anthropic's
 *   signatures are opaque; the transcript does not keep them), its tool uses `tool_use` blocks
 *   whose `tool_result` follows in a user message.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { NativeContent } from "../../core/domain/native/formats.js";
import type { Role } from "../../core/domain/model.js";
import { repoRoot } from "./context.js";
import { prng } from "./service.js";

export const DEFAULT_AGENT_SESSIONS_DIR = "data/agent-sessions";

/** `AGENT_SESSIONS_DIR` overrides the location (resolved against the repository root). */
export const agentSessionsDir = () => path.resolve(repoRoot, process.env.AGENT_SESSIONS_DIR?.trim() || DEFAULT_AGENT_SESSIONS_DIR);

/** One message as an engine would send it: native content, and the role the bench expects the service to derive. */
export interface SessionMessage {
  /** Sent only where the content cannot decide it (Anthropic text-only messages). */
  role?: Role;
  expectedRole: Role;
  native: NativeContent;
}

export interface AgentSession {
  name: string;
  format: NativeContent["format"];
  messages: SessionMessage[];
  /** Items or blocks by type, for the report. */
  types: Record<string, number>;
}

type Item = Record<string, unknown>;

const OUTPUT_TYPES = new Set(["function_call_output", "custom_tool_call_output"]);

function countTypes(messages: readonly SessionMessage[]): Record<string, number> {
  const types: Record<string, number> = {};
  for (const m of messages) {
    for (const e of m.native.content as Item[]) {
      const type = String(e.type ?? (e.role !== undefined ? "message" : "?"));
      const key = type === "message" && typeof e.role === "string" ? `message(${e.role})` : type;
      types[key] = (types[key] ?? 0) + 1;
    }
  }
  return types;
}

/**
 * The `response_item` lines of a Codex rollout as service messages (see the module comment).
 * Every item is sent exactly as recorded.
 */
export function parseCodexRollout(name: string, text: string): AgentSession {
  const messages: SessionMessage[] = [];
  let group: { kind: "assistant" | "user" | "developer"; items: Item[] } | undefined;
  const flush = () => {
    if (!group) return;
    const expectedRole: Role = group.kind === "assistant" ? "ASSISTANT" : group.kind === "user" ? "USER" : "SYSTEM";
    messages.push({ expectedRole, native: { format: "openai-responses", content: group.items } });
    group = undefined;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as { type?: string; payload?: Item };
    if (entry.type !== "response_item" || !entry.payload) continue;
    const item = entry.payload;
    const type = String(item.type ?? "message");
    if (OUTPUT_TYPES.has(type)) {
      flush();
      messages.push({ expectedRole: "TOOL", native: { format: "openai-responses", content: [item] } });
      continue;
    }
    const kind = type === "message" && item.role === "user" ? "user" : type === "message" && (item.role === "developer" || item.role === "system") ? "developer" : "assistant";
    if (group?.kind !== kind) flush();
    group ??= { kind, items: [] };
    group.items.push(item);
  }
  flush();
  return { name, format: "openai-responses", messages, types: countTypes(messages) };
}

/** A made-up Anthropic thinking signature: base64 of `bytes` seeded bytes (real ones are 1-3 KB of opaque base64). */
export function madeUpSignature(rand: () => number, bytes: number): string {
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) buf[i] = Math.floor(rand() * 256);
  return buf.toString("base64");
}

const HEADER = /^_\*\*(User|Agent[^*]*|Assistant)\*\*_\s*$/;

/** The sections of a SpecStory transcript: whose turn and its Markdown body. */
function specStorySections(text: string): Array<{ user: boolean; body: string }> {
  const sections: Array<{ user: boolean; body: string[] }> = [];
  for (const line of text.split("\n")) {
    const m = HEADER.exec(line);
    if (m) sections.push({ user: m[1] === "User", body: [] });
    else sections[sections.length - 1]?.body.push(line);
  }
  return sections.map((s) => ({ user: s.user, body: s.body.join("\n").replace(/\n---\s*$/, "").trim() })).filter((s) => s.body !== "");
}

/** A tool use's body: the arguments (what precedes the first fence) and the output (the rest, fences off). */
function toolUseParts(inner: string): { summary: string; args: string; output: string } {
  const summary = /<summary>([\s\S]*?)<\/summary>/.exec(inner)?.[1]?.trim() ?? "";
  const rest = inner.replace(/^[\s\S]*?<\/summary>/, "").replace(/<\/?details>/g, "").trim();
  const fence = rest.indexOf("```");
  const args = (fence < 0 ? rest : rest.slice(0, fence)).trim();
  const output = fence < 0 ? "" : rest.slice(fence).replace(/^```[^\n]*\n?/gm, "").trim();
  return { summary, args, output };
}

/**
 * A Claude Code session from its SpecStory Markdown v2 transcript, as Anthropic messages: a user
 * turn is one user message; the agent's thought processes, text and tool uses run into one
 * assistant message until a tool use ends it, and that tool's result is the next (tool) message.
 */
export function parseSpecStoryAnthropic(name: string, text: string, seed = 1): AgentSession {
  const rand = prng(seed);
  const messages: SessionMessage[] = [];
  let assistant: Item[] = [];
  let calls = 0;
  const flush = () => {
    // Text alone does not say whose message it is: the engine names the role then.
    const decided = assistant.some((b) => b.type !== "text");
    if (assistant.length > 0) messages.push({ ...(decided ? {} : { role: "ASSISTANT" as const }), expectedRole: "ASSISTANT", native: { format: "anthropic", content: assistant } });
    assistant = [];
  };
  for (const section of specStorySections(text)) {
    if (section.user) {
      flush();
      messages.push({ role: "USER", expectedRole: "USER", native: { format: "anthropic", content: [{ type: "text", text: section.body }] } });
      continue;
    }
    // One agent section holds a thought process, a tool use, or text.
    const think = /^<think>([\s\S]*?)<\/think>$/.exec(section.body);
    const tool = /^<tool-use[^>]*data-tool-name="([^"]*)"[^>]*>([\s\S]*?)<\/tool-use>$/.exec(section.body);
    if (think) {
      const thinking = think[1]!.replace(/<\/?details>|<summary>Thought Process<\/summary>/g, "").trim();
      assistant.push({ type: "thinking", thinking, signature: madeUpSignature(rand, 768 + Math.floor(rand() * 1536)) });
    } else if (tool) {
      const { summary, args, output } = toolUseParts(tool[2]!);
      const id = `toolu_${String(++calls).padStart(4, "0")}${madeUpSignature(rand, 12).replace(/[^A-Za-z0-9]/g, "")}`;
      assistant.push({ type: "tool_use", id, name: tool[1]!, input: { summary, ...(args ? { args } : {}) } });
      flush();
      messages.push({
        expectedRole: "TOOL",
        native: { format: "anthropic", content: [{ type: "tool_result", tool_use_id: id, content: [{ type: "text", text: output || "(no output)" }] }] },
      });
    } else {
      assistant.push({ type: "text", text: section.body });
    }
  }
  flush();
  return { name, format: "anthropic", messages, types: countTypes(messages) };
}

export interface FoundSessions {
  dir: string;
  codex: AgentSession[];
  anthropic: AgentSession[];
}

/**
 * The sessions under `dir`: every Codex rollout, and the SpecStory transcripts written by Claude
 * Code (the ones whose header names a Claude Code session).
 */
export function loadAgentSessions(dir = agentSessionsDir()): FoundSessions {
  const files = (sub: string, ext: string) => {
    const at = path.join(dir, sub);
    return existsSync(at) ? readdirSync(at).filter((f) => f.endsWith(ext)).sort().map((f) => path.join(at, f)) : [];
  };
  const codex = files("codex-rollout", ".jsonl").map((f) => parseCodexRollout(path.basename(f), readFileSync(f, "utf8")));
  const anthropic = files("specstory", ".md")
    .map((f) => ({ f, text: readFileSync(f, "utf8") }))
    .filter(({ text }) => /Claude Code Session/.test(text.slice(0, 2_000)) && /SpecStory, Markdown v2/.test(text.slice(0, 200)))
    .map(({ f, text }) => parseSpecStoryAnthropic(path.basename(f), text));
  return { dir, codex, anthropic };
}
