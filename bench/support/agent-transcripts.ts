/**
 * The agent sessions of `AGENT_SESSIONS_DIR` as the agent-evidence benchmark replays them
 * (docs/benchmarks.md, "Agent evidence"): every session as the messages an engine would send,
 * each tool call with its arguments in its agent's own vocabulary and its result as a TOOL message.
 * The Codex rollout is sent as its recorded Responses API items (the service projects them);
 * the text transcripts (SpecStory v1 and v2, a Claude Code terminal transcript, an aider history)
 * become plain messages whose tool calls are rebuilt from what the transcript shows of them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { NativeContent } from "../../core/domain/native/formats.js";
import type { Role, ToolCall } from "../../core/domain/model.js";
import { agentSessionsDir, parseCodexRollout } from "./agent-sessions.js";

/** One message as the bench sends it: plain (role, text, calls, the call it answers) or native. */
export interface SentMessage {
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  native?: NativeContent;
}

export interface TranscriptSession {
  name: string;
  agent: string;
  format: string;
  messages: SentMessage[];
}

/** The append body of one sent message: its native content (the role where the format leaves it open), or its plain fields. */
export function sentBody(m: SentMessage): Record<string, unknown> {
  if (m.native) return { ...(m.native.format === "anthropic" ? { role: m.role } : {}), native: m.native };
  return { role: m.role, content: m.content, ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}), ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}) };
}

/** A transcript's messages, numbering the calls it rebuilds. */
class Builder {
  readonly messages: SentMessage[] = [];
  private calls = 0;
  say(role: Role, content: string) {
    if (content.trim()) this.messages.push({ role, content: content.trim() });
  }
  /** An ASSISTANT message with one call, and its result as a TOOL message. */
  tool(name: string, args: Record<string, unknown> | string, output: string) {
    const id = `call_${++this.calls}`;
    this.messages.push({ role: "ASSISTANT", content: "", toolCalls: [{ id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) }] });
    this.messages.push({ role: "TOOL", content: output.trim() || "(no output)", toolCallId: id });
  }
}

const FENCE = /```[^\n]*\n([\s\S]*?)\n?```/g;
const fences = (text: string) => [...text.matchAll(FENCE)].map((m) => m[1] ?? "");
const backticked = (text: string) => /`([^`\n]+)`/.exec(text)?.[1]?.trim();

/** `**Update: `path`**`-style lines of a SpecStory apply_patch, as the patch header Codex sent. */
function patchOf(body: string): string {
  const lines = [...body.matchAll(/\*\*(Add|Update|Delete|Create):? `([^`]+)`\*\*/g)].map((m) => `*** ${m[1] === "Create" ? "Add" : m[1]} File: ${m[2]}`);
  return ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
}

/** A SpecStory v2 tool use as the call its agent made: the arguments its vocabulary names, and the output. */
function v2Call(name: string, type: string, inner: string): { args: Record<string, unknown> | string; output: string } {
  const summary = /<summary>([\s\S]*?)<\/summary>/.exec(inner)?.[1] ?? "";
  const body = inner.replace(/^[\s\S]*?<\/summary>/, "").replace(/<\/?details>/g, "");
  const blocks = fences(body);
  const after = (label: string) => new RegExp(`${label}:\\s*([^\\n<]+)`).exec(summary)?.[1]?.trim();
  if (name === "apply_patch") return { args: patchOf(body), output: body };
  if (type === "shell" || type === "bash" || /command|exec|bash|shell|terminal/i.test(name)) {
    const command = backticked(summary.replace(/^.*?\*\*[^*]+\*\*/, "")) ?? after("Run command") ?? backticked(body.split("```")[0] ?? "") ?? blocks[0] ?? "";
    const output = blocks.length > 1 || !backticked(summary.replace(/^.*?\*\*[^*]+\*\*/, "")) ? blocks.slice(blocks[0]?.trim() === command.trim() ? 1 : 0).join("\n") : blocks.join("\n");
    return { args: name === "exec_command" ? { cmd: command } : { command }, output: output || blocks.join("\n") };
  }
  const file = after("Read file") ?? after("Edit file") ?? after("Write file") ?? backticked(body.split("```")[0] ?? "");
  const key = name === "Read" || name === "Write" || name === "Edit" || name === "MultiEdit" ? "file_path" : "target_file";
  return { args: file ? { [key]: file } : { summary: summary.replace(/\*\*/g, "") }, output: blocks.join("\n") || body };
}

/** SpecStory Markdown v2 (any agent): turn headers, and `<tool-use>` blocks. */
export function parseSpecStoryV2(text: string): SentMessage[] {
  const b = new Builder();
  for (const section of text.split(/^_\*\*(User|Agent[^*]*|Assistant)\*\*_\s*$/m).slice(1).reduce<Array<[string, string]>>((acc, part, i, all) => (i % 2 === 0 ? [...acc, [part, all[i + 1] ?? ""]] : acc), [])) {
    const [who, raw] = section;
    const body = raw.replace(/\n---\s*$/, "").trim();
    if (who === "User") {
      b.say("USER", body);
      continue;
    }
    let rest = body;
    for (const m of body.matchAll(/<tool-use[^>]*data-tool-type="([^"]*)"[^>]*data-tool-name="([^"]*)"[^>]*>([\s\S]*?)<\/tool-use>/g)) {
      const { args, output } = v2Call(m[2]!, m[1]!, m[3]!);
      b.tool(m[2]!, args, output);
      rest = rest.replace(m[0], "");
    }
    b.say("ASSISTANT", rest.replace(/<think>[\s\S]*?<\/think>/g, ""));
  }
  return b.messages;
}

/** SpecStory Markdown v1 (Cursor): `_**User**_` / `_**Assistant**_`, `---` between parts, tool uses as `Tool use: **name**`, `Read file: p`, or a bash fence and its output. */
export function parseSpecStoryV1(text: string): SentMessage[] {
  const b = new Builder();
  let who: "USER" | "ASSISTANT" | null = null;
  for (const part of text.split(/^---\s*$/m)) {
    const header = /^\s*_\*\*(User|Assistant)[^*]*\*\*_\s*$/m.exec(part);
    let body = part;
    if (header) {
      who = header[1] === "User" ? "USER" : "ASSISTANT";
      body = part.slice(header.index + header[0].length);
    }
    body = body.trim();
    if (!who || !body) continue;
    if (who === "USER") {
      b.say("USER", body);
      continue;
    }
    const name = /^Tool use: \*\*([^*]+)\*\*/.exec(body)?.[1];
    const blocks = fences(body);
    const file = /^(Read|Edit|Edited|Write|Deleted?) file: (.+)$/m.exec(body);
    const bash = /```(?:bash|sh|shell|powershell)\n([\s\S]*?)\n```/.exec(body);
    if (file) {
      const op = file[1]!.startsWith("Read") ? "read_file" : file[1]!.startsWith("Del") ? "delete_file" : "edit_file";
      b.tool(name ?? op, { target_file: file[2]!.trim() }, body.slice(file.index + file[0].length));
    } else if (bash && (name === undefined || /terminal|command|shell/i.test(name))) {
      b.tool(name ?? "run_terminal_cmd", { command: bash[1]!.trim() }, blocks.slice(1).join("\n"));
    } else if (name) {
      b.tool(name, { summary: body.split("\n").slice(1, 3).join(" ").trim() }, body);
    } else b.say("ASSISTANT", body);
  }
  return b.messages;
}

/** Claude Code's terminal transcript: `> ` user lines, `⏺`/`●` assistant lines, `⏺ Tool(args)` calls with `⎿` results. */
export function parseConsoleTranscript(text: string): SentMessage[] {
  const b = new Builder();
  const NAMES: Record<string, [string, string]> = { Read: ["Read", "file_path"], Update: ["Edit", "file_path"], Edit: ["Edit", "file_path"], Write: ["Write", "file_path"], Bash: ["Bash", "command"], Search: ["Grep", "pattern"], List: ["LS", "path"] };
  const blocks = text.split(/\n(?=> |⏺ |● |✻ )/);
  for (const block of blocks) {
    if (block.startsWith("> ")) b.say("USER", block.replace(/^> /, "").replace(/\n {2}/g, "\n"));
    else if (/^[⏺●] /.test(block)) {
      const line = block.slice(2);
      const call = /^(\w+)\(([\s\S]*?)\)…?(?:\n|$)/.exec(line);
      const known = call ? NAMES[call[1]!] : undefined;
      if (call && known) {
        const output = block.slice(block.indexOf(call[0]) + call[0].length).replace(/^\s*⎿\s?/gm, "");
        b.tool(known[0], { [known[1]]: call[2]!.replace(/\n\s*/g, " ").trim() }, output);
      } else b.say("ASSISTANT", line);
    }
  }
  return b.messages;
}

/** aider's chat history: `#### ` user lines, `> ` the tool's output (a TOOL result of aider's own run), the rest the assistant. */
export function parseAider(text: string): SentMessage[] {
  const b = new Builder();
  let role: "USER" | "ASSISTANT" | "OUT" | null = null;
  let lines: string[] = [];
  const flush = () => {
    const body = lines.join("\n");
    if (role === "USER" || role === "ASSISTANT") b.say(role, body);
    else if (role === "OUT" && body.trim()) {
      // aider's own report of what it did: each edit applied, each shell command it ran, else its output.
      const edits = [...body.matchAll(/^Applied edit to (.+?)\s*$/gm)].map((m) => m[1]!);
      const runs = [...body.matchAll(/^(?:Run shell command\??:?|Running) (.+?)\s*$/gm)].map((m) => m[1]!);
      for (const file of edits) b.tool("edit_file", { target_file: file }, `Applied edit to ${file}`);
      for (const command of runs) b.tool("run_command", { command }, body);
      if (edits.length + runs.length === 0) b.tool("aider", { summary: "output" }, body);
    }
    lines = [];
  };
  for (const raw of text.split("\n")) {
    const kind = raw.startsWith("#### ") ? "USER" : raw.startsWith("> ") || raw === ">" ? "OUT" : raw.startsWith("# aider chat started") ? null : "ASSISTANT";
    if (kind !== role || kind === null) flush();
    role = kind;
    if (kind === "USER") lines.push(raw.slice(5));
    else if (kind === "OUT") lines.push(raw.slice(2).trimEnd());
    else if (kind === "ASSISTANT") lines.push(raw);
  }
  flush();
  return b.messages;
}

/** Every session of the folder, each by its format (the README of the data names them). */
export function loadTranscripts(dir = agentSessionsDir()): TranscriptSession[] {
  const files = (sub: string) => (existsSync(path.join(dir, sub)) ? readdirSync(path.join(dir, sub)).sort().map((f) => path.join(dir, sub, f)) : []);
  const out: TranscriptSession[] = [];
  for (const f of files("codex-rollout").filter((x) => x.endsWith(".jsonl"))) {
    const s = parseCodexRollout(path.basename(f), readFileSync(f, "utf8"));
    out.push({ name: s.name, agent: "Codex CLI", format: "Codex rollout (native)", messages: s.messages.map((m) => ({ role: m.expectedRole, content: "", native: m.native })) });
  }
  for (const f of files("specstory").filter((x) => x.endsWith(".md"))) {
    const text = readFileSync(f, "utf8");
    const v2 = /SpecStory, Markdown v2|<tool-use /.test(text.slice(0, 5000)) || text.includes("<tool-use ");
    const agent = !v2 ? "Cursor" : /Claude Code|claude-/.test(text.slice(0, 5000)) ? "Claude Code" : /Codex|gpt-5/.test(text.slice(0, 5000)) ? "Codex CLI" : "Cursor";
    out.push({ name: path.basename(f), agent, format: v2 ? "SpecStory v2" : "SpecStory v1", messages: v2 ? parseSpecStoryV2(text) : parseSpecStoryV1(text) });
  }
  for (const f of files("claude-code-console").filter((x) => x.endsWith(".md"))) {
    out.push({ name: path.basename(f), agent: "Claude Code", format: "terminal transcript", messages: parseConsoleTranscript(readFileSync(f, "utf8")) });
  }
  for (const f of files("aider").filter((x) => x.endsWith(".md"))) {
    out.push({ name: path.basename(f), agent: "aider", format: "aider history", messages: parseAider(readFileSync(f, "utf8")) });
  }
  return out;
}
