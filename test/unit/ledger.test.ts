import { describe, expect, it } from "vitest";
import { extendLedger, type LedgerSource } from "../../core/domain/ledger/build.js";
import { emptyLedger, LEDGER_LIMITS, Ledger, ledgerMessageIds, mapLedgerIds } from "../../core/domain/ledger/model.js";
import { ledgerBudget, renderLedger, sectionTokens } from "../../core/domain/ledger/render.js";
import { errorLines, exitStatus, outcomeOf, ruleSentences } from "../../core/domain/ledger/scan.js";
import { ledgerEvidenceUnits, ledgerLoss } from "../../core/domain/ledger/units.js";
import { tunablesFromEnv } from "../../core/domain/tunables.js";
import { checkSummary } from "../../core/domain/quality-gate.js";

let n = 0;
const id = () => `m${String(++n).padStart(4, "0")}`;
const user = (content: string): LedgerSource => ({ id: id(), role: "USER", content, tags: [] });
const call = (name: string, args: unknown, callId = `c${n + 1}`): LedgerSource => ({
  id: id(),
  role: "ASSISTANT",
  content: "",
  tags: [],
  toolCalls: [{ id: callId, name, arguments: typeof args === "string" ? args : JSON.stringify(args) }],
});
const result = (callId: string, content: string): LedgerSource => ({ id: id(), role: "TOOL", content, tags: [], toolCallId: callId });

describe("ledger: tool vocabularies", () => {
  const files = (m: LedgerSource, own?: Record<string, string>) => extendLedger(null, [m], own).files.map((f) => `${f.op} ${f.path}`);
  const commands = (m: LedgerSource, own?: Record<string, string>) => extendLedger(null, [m], own).commands.map((c) => c.command);

  it("reads Claude Code's Read, Write, Edit, MultiEdit, NotebookEdit, Grep and Glob by their path arguments", () => {
    expect(files(call("Read", { file_path: "/repo/a.ts" }))).toEqual(["read /repo/a.ts"]);
    expect(files(call("Write", { file_path: "b.ts", content: "error everywhere" }))).toEqual(["created b.ts"]);
    expect(files(call("Edit", { file_path: "c.ts", old_string: "x", new_string: "y" }))).toEqual(["edited c.ts"]);
    expect(files(call("MultiEdit", { file_path: "d.ts", edits: [{ old_string: "a", new_string: "b" }] }))).toEqual(["edited d.ts"]);
    expect(files(call("NotebookEdit", { notebook_path: "n.ipynb" }))).toEqual(["edited n.ipynb"]);
    expect(files(call("Grep", { pattern: "TODO", path: "src" }))).toEqual(["read src"]);
    expect(files(call("Glob", { pattern: "**/*.ts" }))).toEqual([]);
  });

  it("reads Claude Code's Bash and Codex's shell argv, exec_command and apply_patch", () => {
    expect(commands(call("Bash", { command: "npm test -- --run\necho done", description: "tests" }))).toEqual(["npm test -- --run"]);
    expect(commands(call("shell", { command: ["bash", "-lc", "pytest -q"], workdir: "/w" }))).toEqual(["pytest -q"]);
    expect(commands(call("exec_command", { cmd: "ls -la" }))).toEqual(["ls -la"]);
    const patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** Update File: src/a.py\n@@\n*** Delete File: old.txt\n*** End Patch";
    expect(files(call("apply_patch", patch))).toEqual(["created docs/new.md", "edited src/a.py", "deleted old.txt"]);
    expect(files(call("apply_patch", { input: patch }))).toEqual(["created docs/new.md", "edited src/a.py", "deleted old.txt"]);
  });

  it("reads Cursor's, the AI SDK's, the MCP filesystem server's and Anthropic's text editor's names", () => {
    expect(files(call("read_file", { target_file: "src/x.ts" }))).toEqual(["read src/x.ts"]);
    expect(files(call("edit_file", { target_file: "src/y.ts", code_edit: "..." }))).toEqual(["edited src/y.ts"]);
    expect(files(call("delete_file", { target_file: "tmp.txt" }))).toEqual(["deleted tmp.txt"]);
    expect(commands(call("run_terminal_cmd", { command: "pnpm lint", is_background: false }))).toEqual(["pnpm lint"]);
    expect(files(call("readFile", { path: "README.md" }))).toEqual(["read README.md"]);
    expect(files(call("mcp__filesystem__write_file", { path: "/data/out.json", content: "{}" }))).toEqual(["created /data/out.json"]);
    expect(files(call("read_multiple_files", { paths: ["a.txt", "b.txt"] }))).toEqual(["read a.txt", "read b.txt"]);
    expect(files(call("str_replace_based_edit_tool", { command: "view", path: "v.py" }))).toEqual(["read v.py"]);
    expect(files(call("str_replace_based_edit_tool", { command: "create", path: "w.py", file_text: "x" }))).toEqual(["created w.py"]);
    expect(files(call("str_replace_based_edit_tool", { command: "str_replace", path: "w.py", old_str: "a", new_str: "b" }))).toEqual(["edited w.py"]);
  });

  it("reads the MCP filesystem server's tools, with or without their server prefix", () => {
    expect(files(call("read_text_file", { path: "notes/a.md", head: 10 }))).toEqual(["read notes/a.md"]);
    expect(files(call("mcp__filesystem__edit_file", { path: "src/z.ts", edits: [{ oldText: "a", newText: "b" }], dryRun: false }))).toEqual(["edited src/z.ts"]);
    expect(files(call("filesystem.create_directory", { path: "build/out" }))).toEqual(["created build/out"]);
    expect(files(call("move_file", { source: "a.txt", destination: "b.txt" }))).toEqual(["deleted a.txt", "created b.txt"]);
    expect(files(call("rename_path", { source: "old/", destination: "new/" }))).toEqual(["deleted old/", "created new/"]);
    expect(files(call("mcp__fs__directory_tree", { path: "/srv" }))).toEqual(["read /srv"]);
    expect(files(call("search_files", { path: "src", pattern: "*.ts" }))).toEqual(["read src"]);
  });

  it("maps an engine's own names through ledgerTools, and ignores what it marks ignore", () => {
    expect(commands(call("sh_run", { script: "make all" }), { sh_run: "command" })).toEqual(["make all"]);
    expect(files(call("fetch_doc", { path: "spec.md" }), { fetch_doc: "read" })).toEqual(["read spec.md"]);
    expect(files(call("Read", { file_path: "secret.txt" }), { Read: "ignore" })).toEqual([]);
  });

  it("falls back to the paths and commands in an unknown tool's arguments, its name guessing the operation", () => {
    expect(files(call("project_save_note", { filename: "notes/today.md" }))).toEqual(["created notes/today.md"]);
    expect(files(call("lookup_thing", { file: "data.csv" }))).toEqual(["read data.csv"]);
    expect(commands(call("sandbox", { cmd: "cargo build" }))).toEqual(["cargo build"]);
    expect(files(call("web_fetch", { url: "https://example.com/a.ts" }))).toEqual([]);
    expect(files(call("broken", "{not json"))).toEqual([]);
  });
});

describe("ledger: text rules", () => {
  it("takes the first error lines of a result, not lines that count zero errors", () => {
    expect(errorLines("compiling\nsrc/a.ts(3,1): error TS2304: Cannot find name 'x'.\n0 errors in b")).toEqual(["src/a.ts(3,1): error TS2304: Cannot find name 'x'."]);
    expect(errorLines("FAIL src/a.test.ts\nTraceback (most recent call last):\nValueError: bad\nnpm ERR! code 1").length).toBe(LEDGER_LIMITS.errorsPerResult);
    expect(errorLines("all good\nno errors found")).toEqual([]);
  });

  it("reads exit statuses in the usual spellings, and a command's outcome", () => {
    expect(exitStatus("Exit code: 1\nWall time: 2s")).toBe(1);
    expect(exitStatus('{"output":"x","metadata":{"exit_code":0}}')).toBe(0);
    expect(exitStatus("Process exited with code 127")).toBe(127);
    expect(exitStatus("ok")).toBeNull();
    expect(outcomeOf("Exit code: 0", false)).toEqual({ outcome: "exit 0", clean: true });
    expect(outcomeOf("Error: boom", false)).toEqual({ outcome: "failed", clean: false });
    expect(outcomeOf("done", true)).toEqual({ outcome: "failed", clean: false });
    expect(outcomeOf("done", false)).toEqual({ outcome: "ok", clean: true });
  });

  it("takes the rule sentences of a USER message, not quoted code or log lines", () => {
    const text = "Thanks! Never push to main. Run the tests.\n- always use pnpm\n```\nyou must not see this\n```\n> must be quoted\nDo not touch the lockfile; keep it.";
    expect(ruleSentences(text)).toEqual(["Never push to main.", "always use pnpm", "Do not touch the lockfile;"]);
    // Chat says never, always, don't and must without setting a rule.
    const chat = "Must be awesome to see it on display. Must've taken ages. You must have been tired! Never saw this coming. Don't worry, I'm fine. Don't feel like going. You never know. Love how you never give up. It's hard when you don't have time.";
    expect(ruleSentences(chat)).toEqual([]);
    expect(ruleSentences("You must have tests for every route. We never deploy on Fridays. When you commit, you must run lint.")).toEqual([
      "You must have tests for every route.",
      "We never deploy on Fridays.",
      "When you commit, you must run lint.",
    ]);
    // LoCoMo's USER lines that read as rules: advice and praise between friends.
    const locomo = [
      "Don't forget to prepare emotionally, since the wait can be hard.",
      "You never shy away from a challenge and always try something new.",
      "And don't forget to stay positive and motivate others.",
      "Don't give up, buddy! Don't let anything stop you. Don't be scared to reach out. Don't forget to take breaks and have fun.",
    ];
    expect(locomo.flatMap(ruleSentences)).toEqual([]);
    // The same openings with work to do stay rules.
    expect(ruleSentences("Don't forget to prepare the migration. Don't forget to stay on the release branch. You never push to main. Don't let it run past 5 minutes.")).toEqual([
      "Don't forget to prepare the migration.",
      "Don't forget to stay on the release branch.",
      "You never push to main.",
      "Don't let it run past 5 minutes.",
    ]);
    expect(ruleSentences("must must must. ".repeat(100)).length).toBeLessThanOrEqual(LEDGER_LIMITS.constraintsPerMessage);
    // Statements are not rules: the rule word must open the sentence or bind "you" or "we".
    expect(ruleSentences("I always loved painting. It must be nice there. You must run the linter first. We never deploy on Fridays. Please don't rename files.")).toEqual([
      "You must run the linter first.",
      "We never deploy on Fridays.",
      "Please don't rename files.",
    ]);
  });
});

describe("ledger: building over folds", () => {
  it("keeps each file's last operation and its message, but a later read does not hide a change", () => {
    const edit = call("Edit", { file_path: "a.ts" });
    const read = call("Read", { file_path: "a.ts" });
    const del = call("delete_file", { target_file: "a.ts" });
    expect(extendLedger(null, [edit, read]).files).toEqual([{ path: "a.ts", op: "edited", messageId: edit.id }]);
    expect(extendLedger(null, [edit, read, del]).files).toEqual([{ path: "a.ts", op: "deleted", messageId: del.id }]);
  });

  it("gives a command its outcome from its result, counts its runs, and waits for a result folded later", () => {
    const first = call("Bash", { command: "npm test" }, "t1");
    const l1 = extendLedger(null, [first]);
    expect(l1.commands[0]).toMatchObject({ command: "npm test", outcome: "pending", runs: 1 });
    expect(l1.pending.map((p) => p.callId)).toEqual(["t1"]);
    const out = result("t1", "FAIL src/x.test.ts\nExit code: 1");
    const l2 = extendLedger(l1, [out]);
    expect(l2.commands[0]).toMatchObject({ outcome: "exit 1", resultId: out.id, messageId: first.id });
    expect(l2.pending).toEqual([]);
    expect(l2.errors.map((e) => [e.text, e.source, e.resolvedBy])).toEqual([["FAIL src/x.test.ts", "npm test", undefined]]);
    const again = call("Bash", { command: "npm test" }, "t2");
    const ok = result("t2", "all passed\nExit code: 0");
    const l3 = extendLedger(l2, [again, ok]);
    expect(l3.commands[0]).toMatchObject({ outcome: "exit 0", runs: 2 });
    expect(l3.errors[0]!.resolvedBy).toBe(ok.id);
    expect(l1.commands[0]!.outcome).toBe("pending"); // the prior ledger is never changed
  });

  it("does not take error words in a file's contents for errors, unless the read itself failed", () => {
    const read = call("Read", { file_path: "err.ts" }, "r1");
    const l = extendLedger(null, [read, result("r1", "class MyError extends Error {}\nthrow new Error('x')")]);
    expect(l.errors).toEqual([]);
    const missing = call("Read", { file_path: "gone.ts" }, "r2");
    expect(extendLedger(null, [missing, result("r2", "Error: ENOENT: no such file or directory")]).errors).toHaveLength(1);
  });

  it("takes rules from USER messages only, once each, newest last", () => {
    const a = user("Never force-push.");
    const b: LedgerSource = { id: id(), role: "ASSISTANT", content: "I will never force-push.", tags: [] };
    const c = user("never force-push.");
    expect(extendLedger(null, [a, b, c]).constraints).toEqual([{ text: "never force-push.", messageId: c.id }]);
  });

  it("holds its caps on hostile input, counting what it drops, in time linear in the messages", () => {
    const messages: LedgerSource[] = [];
    for (let i = 0; i < 3000; i++) {
      messages.push(call("Read", { file_path: `f${i}.ts` }, `r${i}`), result(`r${i}`, "x"));
      messages.push(call("Bash", { command: `cmd ${i} ${"y".repeat(400)}` }, `b${i}`), result(`b${i}`, `error ${i}\nerror b${i}\nerror c${i}\nerror d${i}`));
      messages.push(user(`Never do ${i}. `.repeat(50)));
    }
    const l = extendLedger(null, messages);
    expect(l.files.length).toBe(LEDGER_LIMITS.files);
    expect(l.commands.length).toBe(LEDGER_LIMITS.commands);
    expect(l.errors.length).toBe(LEDGER_LIMITS.errors);
    expect(l.constraints.length).toBe(LEDGER_LIMITS.constraints);
    expect(l.evicted).toEqual({ files: 3000 - LEDGER_LIMITS.files, commands: 3000 - LEDGER_LIMITS.commands, errors: 9000 - LEDGER_LIMITS.errors, constraints: 3000 - LEDGER_LIMITS.constraints });
    expect(l.commands.every((c) => c.command.length <= LEDGER_LIMITS.commandChars)).toBe(true);
    expect(Ledger.safeParse(l).success).toBe(true);
  });

  it("maps and lists the message ids it cites", () => {
    const edit = call("Edit", { file_path: "a.ts" });
    const l = extendLedger(null, [edit]);
    expect(ledgerMessageIds(l)).toEqual([edit.id]);
    expect(mapLedgerIds(l, (x) => `new-${x}`).files[0]!.messageId).toBe(`new-${edit.id}`);
  });
});

describe("ledger: the section and its bound", () => {
  const busy = () => {
    const messages: LedgerSource[] = [user("Never commit secrets."), user("Always run the linter.")];
    for (let i = 0; i < 200; i++) messages.push(call("Read", { file_path: `src/read-${i}.ts` }));
    for (let i = 0; i < 60; i++) messages.push(call("Bash", { command: `step ${i}` }, `s${i}`), result(`s${i}`, i % 2 ? "ok" : `Error: step ${i} broke`));
    messages.push(call("Edit", { file_path: "src/changed.ts" }));
    return extendLedger(null, messages);
  };

  it("fits its budget, and lists rules and open errors before old reads, counting what it leaves out", () => {
    const s = renderLedger(busy(), 300);
    expect(s.tokens).toBeLessThanOrEqual(300);
    expect(s.text).toContain("Never commit secrets.");
    expect(s.text).toContain("Always run the linter.");
    expect(s.text).toContain("Error: step 58 broke");
    expect(s.text).not.toContain("src/read-0.ts");
    expect(s.text).toMatch(/Not listed here: .*files read/);
    expect(s).toMatchObject({ constraints: 2, files: 201, commands: 60 });
  });

  it("lists everything when the budget holds it, and nothing for an empty ledger or no budget", () => {
    const s = renderLedger(busy(), 8000);
    expect(s.text).toContain("src/read-0.ts");
    expect(s.text).not.toContain("Not listed here");
    expect(s.tokens).toBe(sectionTokens(s.text));
    expect(renderLedger(emptyLedger(), 1000).text).toBe("");
    expect(renderLedger(busy(), 0).text).toBe("");
  });

  it("is deterministic: the same ledger and budget give the same bytes", () => {
    const l = busy();
    expect(renderLedger(structuredClone(l), 500).text).toBe(renderLedger(l, 500).text);
  });

  it("takes its budget from the window share, the ceiling, or the prior budget without a window", () => {
    const t = { ledgerWindowShare: 0.1, ledgerMaxTokens: 8000 };
    expect(ledgerBudget(t, 32_000, undefined)).toBe(3200);
    expect(ledgerBudget(t, 200_000, undefined)).toBe(8000);
    expect(ledgerBudget(t, undefined, 1234)).toBe(1234);
    expect(ledgerBudget(t, undefined, undefined)).toBe(3200);
    expect(ledgerBudget({ ...t, ledgerWindowShare: 0 }, 32_000, 1234)).toBe(0);
  });

  it("names the folded part's rules and open errors for the quality gate, and counts what the section lists", () => {
    const l = busy();
    expect(ledgerEvidenceUnits(l)).toEqual(["Always run the linter", "Never commit secrets", "Error step 58 broke", "Error step 56 broke"]);
    // Each one is what the quality gate finds in a summary that says it.
    expect(checkSummary("You must keep: Always run the linter; Never commit secrets. Error step 58 broke, Error step 56 broke.", { maxTokens: 400, required: ledgerEvidenceUnits(l) })).toEqual({ ok: true });
    expect(ledgerEvidenceUnits(extendLedger(null, [user(`Never ${"x".repeat(200)}.`)]))).toEqual([]);
    const loss = ledgerLoss(l, renderLedger(l, 300));
    expect(loss.items).toBe(201 + 60 + 30 + 2);
    expect(loss.listed).toBeGreaterThan(0);
    expect(loss.listed).toBeLessThan(loss.items);
  });
});

describe("ledger: tunables", () => {
  it("reads LEDGER_TOOLS as a JSON object of tool kinds, and refuses other kinds or bad JSON naming the variable", () => {
    expect(tunablesFromEnv({ LEDGER_TOOLS: '{"sh":"command"}' }).ledgerTools).toEqual({ sh: "command" });
    expect(() => tunablesFromEnv({ LEDGER_TOOLS: '{"sh":"launch"}' })).toThrow(/ledgerTools/);
    expect(() => tunablesFromEnv({ LEDGER_TOOLS: "{sh" })).toThrow(/LEDGER_TOOLS/);
    expect(tunablesFromEnv({ LEDGER_WINDOW_SHARE: "0.05" }).ledgerWindowShare).toBe(0.05);
  });
});
