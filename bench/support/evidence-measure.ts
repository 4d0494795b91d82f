/**
 * What the agent-evidence benchmark counts (docs/benchmarks.md, "Agent evidence"): the evidence a
 * session mentioned, by the ledger's documented rules applied to every stored message without its
 * caps, and whether a prompt's text still carries each item word for word.
 */
import { classifyCall, type CallEvidence } from "../../core/domain/ledger/tools.js";
import { errorLines, outcomeOf, readFailed, ruleSentences } from "../../core/domain/ledger/scan.js";
import type { Message } from "../../core/domain/model.js";

export const KINDS = ["paths", "commands", "errors", "constraints"] as const;
export type Kind = (typeof KINDS)[number];

/** Per kind, each distinct item and the messages that mention it. */
export type Evidence = Record<Kind, Map<string, Set<string>>>;

const add = (map: Map<string, Set<string>>, item: string, id: string) => {
  const key = item.endsWith("…") ? item.slice(0, -1) : item;
  if (key.trim().length < 2) return;
  let ids = map.get(key);
  if (!ids) map.set(key, (ids = new Set()));
  ids.add(id);
};

/** The evidence `messages` (a whole session, stored) mention: paths and commands of calls, error lines of results, rules of USER messages. */
export function evidenceOf(messages: readonly Message[]): Evidence {
  const out: Evidence = { paths: new Map(), commands: new Map(), errors: new Map(), constraints: new Map() };
  const calls = new Map<string, CallEvidence>();
  for (const m of messages) {
    if (m.role === "USER") for (const s of ruleSentences(m.content)) add(out.constraints, s, m.id);
    for (const call of m.toolCalls ?? []) {
      const ev = classifyCall(call);
      if (!ev) continue;
      calls.set(call.id, ev);
      for (const f of ev.files) add(out.paths, f.path, m.id);
      if (ev.command) add(out.commands, ev.command, m.id);
    }
    const answered = m.toolCallIds?.length ? m.toolCallIds : m.toolCallId ? [m.toolCallId] : [];
    for (const id of answered) {
      const ev = calls.get(id);
      if (!ev) continue;
      const reads = ev.kind === "read" || ev.kind === "search";
      const lines = reads ? (readFailed(m.content) ? errorLines(m.content) : []) : outcomeOf(m.content, false).clean ? [] : errorLines(m.content);
      for (const line of lines) add(out.errors, line, m.id);
    }
  }
  return out;
}

/** The text of a message as a prompt carries it: its content, and each call's name and arguments (JSON strings unescaped too). */
export function promptText(m: Pick<Message, "content" | "toolCalls">): string {
  const parts = [m.content];
  for (const call of m.toolCalls ?? []) {
    parts.push(call.name, call.arguments);
    try {
      const strings: string[] = [];
      const walk = (v: unknown) => {
        if (typeof v === "string") strings.push(v);
        else if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === "object") Object.values(v).forEach(walk);
      };
      walk(JSON.parse(call.arguments));
      parts.push(strings.join(" "));
    } catch {
      // not JSON: the raw text is already there
    }
  }
  return parts.join("\n");
}

export interface KindShare {
  /** Distinct items the session mentioned, and how many the prompt carries. */
  mentioned: number;
  carried: number;
  /** Of those mentioned only in messages out of the prompt (folded, or dropped by truncation), how many the prompt carries. */
  outside: number;
  outsideCarried: number;
}

/**
 * Per kind, what `prompt` carries of `evidence`; `inPrompt` holds the ids of the messages the
 * prompt shows verbatim (the active ones, or truncation's newest).
 */
export function shares(evidence: Evidence, prompt: string, inPrompt: ReadonlySet<string>): Record<Kind, KindShare> {
  const squeezed = prompt.replace(/\s+/g, " ");
  const carries = (item: string) => prompt.includes(item) || squeezed.includes(item.replace(/\s+/g, " "));
  const out = {} as Record<Kind, KindShare>;
  for (const kind of KINDS) {
    const s: KindShare = { mentioned: 0, carried: 0, outside: 0, outsideCarried: 0 };
    for (const [item, ids] of evidence[kind]) {
      const carried = carries(item);
      s.mentioned++;
      if (carried) s.carried++;
      if (![...ids].some((id) => inPrompt.has(id))) {
        s.outside++;
        if (carried) s.outsideCarried++;
      }
    }
    out[kind] = s;
  }
  return out;
}
