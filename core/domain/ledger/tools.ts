/**
 * What a tool call does, for the evidence ledger (docs/evidence-ledger.md, "Tool vocabularies"): the
 * calls of the common agents by name, an engine's own names through the `ledgerTools` tunable,
 * and for any other tool the paths and commands found in its arguments. Pure; every walk over
 * the arguments is bounded.
 */
import { LEDGER_LIMITS, type FileOp } from "./model.js";

import { TOOL_KINDS, type ToolKind } from "./section.js";

export { TOOL_KINDS, type ToolKind };

/**
 * The built-in vocabulary, by tool name in lower case: Claude Code's, Codex CLI's, Cursor's, the
 * Vercel AI SDK's and OpenAI Agents SDK's usual names, the MCP filesystem server's, and
 * Anthropic's text editor tool (its `command` argument decides, see {@link classifyCall}).
 */
const VOCABULARY: Readonly<Record<string, ToolKind>> = Object.freeze({
  // Claude Code
  read: "read",
  write: "create",
  edit: "edit",
  multiedit: "edit",
  notebookedit: "edit",
  notebookread: "read",
  bash: "command",
  grep: "search",
  glob: "search",
  ls: "read",
  // Codex CLI
  shell: "command",
  local_shell: "command",
  exec_command: "command",
  container_exec: "command",
  apply_patch: "patch",
  // Cursor
  read_file: "read",
  read_file_v2: "read",
  list_dir: "read",
  edit_file: "edit",
  edit_file_v2: "edit",
  search_replace: "edit",
  delete_file: "delete",
  run_terminal_cmd: "command",
  run_terminal_command: "command",
  run_terminal_command_v2: "command",
  grep_search: "search",
  ripgrep_raw_search: "search",
  glob_file_search: "search",
  file_search: "search",
  codebase_search: "search",
  // Vercel AI SDK and OpenAI Agents SDK examples, and other common agents
  readfile: "read",
  writefile: "create",
  editfile: "edit",
  deletefile: "delete",
  write_file: "create",
  create_file: "create",
  delete_file_v2: "delete",
  run_command: "command",
  execute_command: "command",
  runcommand: "command",
  terminal: "command",
  // MCP filesystem server (read_file and write_file above)
  read_text_file: "read",
  read_media_file: "read",
  read_multiple_files: "read",
  list_directory: "read",
  list_directory_with_sizes: "read",
  directory_tree: "read",
  get_file_info: "read",
  search_files: "search",
  move_file: "create",
  create_directory: "create",
  // Anthropic's text editor tool: `command` (view, create, str_replace, insert) decides.
  str_replace_editor: "edit",
  str_replace_based_edit_tool: "edit",
});

/** Argument keys that hold a path, a list of paths, or a command, in any vocabulary. */
const PATH_KEYS = new Set(["path", "file_path", "filepath", "file", "filename", "target_file", "notebook_path", "relative_workspace_path", "target_directory", "destination", "source", "paths", "files", "target_notebook"]);
const COMMAND_KEYS = new Set(["command", "cmd", "script", "commandline", "command_line"]);
/** Keys whose values are file contents or patches: never walked for paths. */
const CONTENT_KEYS = new Set(["content", "contents", "new_string", "old_string", "code_edit", "new_str", "old_str", "file_text", "text", "edits", "input"]);

/** What the ledger takes from one call. */
export interface CallEvidence {
  kind: ToolKind;
  /** Each file the call touched and what it did to it. */
  files: Array<{ path: string; op: FileOp }>;
  /** The command it ran (first line), if it ran one. */
  command?: string;
  /** What an error in its result is said to come from: the command, else the tool and its first path. */
  source: string;
}

/** `name` in the vocabulary: lower case, an MCP server prefix (`mcp__server__tool`, `server.tool`) dropped. */
export function toolKindOf(name: string, own: Readonly<Record<string, string>> = {}): ToolKind | null {
  const mapped = own[name];
  if (mapped !== undefined) return (TOOL_KINDS as readonly string[]).includes(mapped) ? (mapped as ToolKind) : null;
  const lower = name.toLowerCase();
  const bare = lower.startsWith("mcp__") ? lower.slice(lower.lastIndexOf("__") + 2) : lower.slice(Math.max(lower.lastIndexOf("."), lower.lastIndexOf(":"), lower.lastIndexOf("/")) + 1);
  return VOCABULARY[lower] ?? VOCABULARY[bare] ?? null;
}

/** A guess from the words of an unknown tool's name: what it most likely does to the paths it names. */
function opFromName(name: string): FileOp {
  const lower = name.toLowerCase();
  if (/delete|remove|\brm\b|unlink/.test(lower)) return "deleted";
  if (/create|write|new|add|save|move|rename|copy/.test(lower)) return "created";
  if (/edit|update|patch|replace|modify|insert|append/.test(lower)) return "edited";
  return "read";
}

const OP_OF: Partial<Record<ToolKind, FileOp>> = { read: "read", search: "read", create: "created", edit: "edited", delete: "deleted" };

/** The first line of a command, its blanks collapsed, cut to the ledger's limit. */
export function commandLine(command: string): string {
  const first = command.replace(/^\s+/, "").split("\n", 1)[0] ?? "";
  const one = first.replace(/\s+/g, " ").trim();
  return one.length > LEDGER_LIMITS.commandChars ? `${one.slice(0, LEDGER_LIMITS.commandChars - 1)}…` : one;
}

/** A Codex `shell` argv (`["bash", "-lc", "npm test"]`) as the command it runs. */
function argvCommand(argv: readonly unknown[]): string {
  const words = argv.filter((w): w is string => typeof w === "string");
  const shell = words.length >= 3 && /(?:^|\/)(?:ba|z|da)?sh$/.test(words[0]!) && /^-\w*c$/.test(words[1]!);
  return shell ? words.slice(2).join(" ") : words.join(" ");
}

/** A path as the ledger keeps it: trimmed, quotes and a `file://` prefix dropped, cut to its limit; null if it is no path. */
export function cleanPath(raw: string): string | null {
  const path = raw.trim().replace(/^file:\/\//, "").replace(/^["'`]|["'`]$/g, "");
  if (path === "" || path.length > 1024 || /[\n\r\t]/.test(path) || /^[a-z]+:\/\//i.test(path)) return null;
  return path.length > LEDGER_LIMITS.pathChars ? `${path.slice(0, LEDGER_LIMITS.pathChars - 1)}…` : path;
}

/** Paths named by an `apply_patch` body: `*** Add File: p`, `*** Update File: p`, `*** Delete File: p`, `*** Move to: p`. */
export function patchFiles(patch: string): Array<{ path: string; op: FileOp }> {
  const out: Array<{ path: string; op: FileOp }> = [];
  for (const m of patch.matchAll(/^\*\*\* (Add|Update|Delete) File: ([^\n]+)$|^\*\*\* Move to: ([^\n]+)$/gm)) {
    if (out.length >= LEDGER_LIMITS.pathsPerCall) break;
    const path = cleanPath(m[2] ?? m[3] ?? "");
    if (!path) continue;
    const op: FileOp = m[3] !== undefined || m[1] === "Add" ? "created" : m[1] === "Delete" ? "deleted" : "edited";
    out.push({ path, op });
  }
  return out;
}

/** The call's arguments as JSON, or the raw text (a custom tool's input) when they are not. */
function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** Bounded walk over parsed arguments: paths under path keys, the first command under a command key. */
function walkArguments(value: unknown): { paths: string[]; command?: string; patch?: string; editorCommand?: string } {
  const out: { paths: string[]; command?: string; patch?: string; editorCommand?: string } = { paths: [] };
  let budget = 500; // nodes visited at most
  const visit = (v: unknown, key: string | null, depth: number) => {
    if (budget-- <= 0 || depth > 6 || v === null || v === undefined) return;
    if (typeof v === "string") {
      if (key === null) return;
      if (PATH_KEYS.has(key) && out.paths.length < LEDGER_LIMITS.pathsPerCall) {
        const p = cleanPath(v);
        if (p) out.paths.push(p);
      } else if (COMMAND_KEYS.has(key) && out.command === undefined) {
        out.command = v;
      } else if (key === "input" && v.includes("*** Begin Patch")) out.patch = v;
      return;
    }
    if (Array.isArray(v)) {
      // A command given as argv (Codex `shell`), else a list of paths or of objects.
      if (key !== null && COMMAND_KEYS.has(key) && out.command === undefined && v.every((w) => typeof w === "string")) {
        out.command = argvCommand(v);
        return;
      }
      for (const item of v.slice(0, 50)) visit(item, key, depth + 1);
      return;
    }
    if (typeof v === "object") {
      for (const [k, child] of Object.entries(v as Record<string, unknown>).slice(0, 50)) {
        const lower = k.toLowerCase();
        if (CONTENT_KEYS.has(lower) && !(lower === "input" && typeof child === "string")) continue;
        if (lower === "command" && typeof child === "string" && /^(?:view|create|str_replace|insert|undo_edit)$/.test(child)) {
          out.editorCommand = child;
          continue;
        }
        visit(child, lower, depth + 1);
      }
    }
  };
  visit(value, null, 0);
  return out;
}

/**
 * What one call did (docs/evidence-ledger.md, "Tool vocabularies"): a known tool by its kind, a mapped
 * one by the kind `own` names, any other by the paths and commands its arguments hold (an unknown
 * tool with a command argument runs it; with paths, its name's words guess the operation).
 * `ignore` and tools that name nothing give null.
 */
export function classifyCall(call: { name: string; arguments: string }, own: Readonly<Record<string, string>> = {}): CallEvidence | null {
  const known = toolKindOf(call.name, own);
  if (known === "ignore") return null;
  const parsed = parseArguments(call.arguments);
  const found = typeof parsed === "string" ? { paths: [] as string[], ...(parsed.includes("*** Begin Patch") ? { patch: parsed } : {}) } : walkArguments(parsed);
  const patch = "patch" in found ? found.patch : undefined;
  const command = "command" in found && found.command !== undefined ? commandLine(found.command) : undefined;
  if (known === "patch" || (known === null && patch !== undefined)) {
    const files = patchFiles(patch ?? (typeof parsed === "string" ? parsed : ""));
    return { kind: "patch", files, source: `${call.name} ${files[0]?.path ?? ""}`.trim() };
  }
  if (known === "command" || (known === null && command)) {
    if (!command) return null;
    return { kind: "command", files: [], command, source: command };
  }
  let op: FileOp | undefined = known ? OP_OF[known] : opFromName(call.name);
  const editor = "editorCommand" in found ? found.editorCommand : undefined;
  if (editor === "view") op = "read";
  else if (editor === "create") op = "created";
  if (op === undefined || found.paths.length === 0) return null;
  const files = [...new Set(found.paths)].map((path) => ({ path, op: op! }));
  return { kind: known ?? (op === "read" ? "read" : op === "created" ? "create" : op === "deleted" ? "delete" : "edit"), files, source: `${call.name} ${files[0]!.path}` };
}
