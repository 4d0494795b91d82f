/**
 * The demo's engine (docs/turns.md "Demo"), apart from the command line so that a test can run
 * it on a small conversation: a scripted chat is replayed turn by turn through the client, and the
 * output is one line per compaction, a progress line every `progressEvery` turns, and a closing
 * summary. Turns that did not compact are only counted (by reason) in the progress lines.
 */
import type { LocomoConversation } from "../bench/support/locomo.js";
import { toAnthropicRequest, toOpenAIMessages, type AppendMessageInput, type MemoryClient, type Turn } from "../client/index.js";

export const SYSTEM_PROMPT =
  "You are the second speaker of a long-running chat with the first. Stay consistent with everything said before, " +
  "including what is only in the compacted summary. Use calendar_lookup when a date matters.";

/** One step of the script: the user's message (absent when the assistant speaks first) and the reply. */
export interface Step {
  user?: string;
  reply: string;
  toolCall?: { name: string; args: Record<string, unknown>; result: string };
}

/** Speaker A is the user, speaker B the engine; consecutive lines of one speaker form one message. */
export function conversationSteps(conv: LocomoConversation): Step[] {
  const steps: Step[] = [];
  const bySession = new Map<number, LocomoConversation["turns"]>();
  for (const t of conv.turns) bySession.set(t.session, [...(bySession.get(t.session) ?? []), t]);
  for (const lines of bySession.values()) {
    const utterances: Array<{ user: boolean; text: string }> = [];
    for (const l of lines) {
      const text = l.caption ? `${l.text} [shares a photo: ${l.caption}]` : l.text;
      const user = l.speaker === conv.speakerA;
      const last = utterances[utterances.length - 1];
      if (last && last.user === user) last.text += ` ${text}`;
      else utterances.push({ user, text });
    }
    // The session's date opens its first message, as a chat app would show it.
    const when = lines[0]!.at.toLocaleDateString("en-GB", { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
    if (utterances[0]) utterances[0].text = `[${when}] ${utterances[0].text}`;
    for (let i = 0; i < utterances.length; i++) {
      const u = utterances[i]!;
      if (u.user) {
        const next = utterances[i + 1];
        steps.push({ user: u.text, reply: next && !next.user ? next.text : "That sounds lovely, tell me more!" });
        if (next && !next.user) i++;
      } else {
        steps.push({ reply: u.text });
      }
    }
  }
  return steps;
}

const ACKS = ["ok thanks!", "Thanks!", "got it, thanks", "sounds good", "great, thank you!"];
const MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December";
const DATE_MENTION = new RegExp(`\\b(\\d{1,2} (${MONTHS}),? \\d{4}|(${MONTHS}) \\d{1,2}|yesterday|last (week|month|year)|next (week|month))\\b`, "i");

/** Adds an acknowledgement turn now and then (weak: SOFT folds them) and a tool call now and then. */
export function withEngineHabits(steps: Step[]): Step[] {
  const out: Step[] = [];
  steps.forEach((s, i) => {
    const dated = DATE_MENTION.test(s.reply);
    out.push(dated && i % 3 === 0 ? { ...s, toolCall: { name: "calendar_lookup", args: { about: s.reply.slice(0, 60) }, result: `No conflicting events found (lookup ${i}).` } } : s);
    if (i % 9 === 8) out.push({ user: ACKS[Math.floor(i / 9) % ACKS.length]!, reply: "No problem!" });
  });
  return out;
}

const pad = (v: unknown, n: number) => String(v).padStart(n);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Characters of what reaches the model (texts and tool calls), the unit of `prompt.chars`. */
function promptChars(request: ReturnType<typeof toAnthropicRequest>): number {
  let chars = request.system.reduce((n, b) => n + b.text.length, 0);
  for (const m of request.messages) {
    for (const b of m.content) {
      if (b.type === "text") chars += b.text.length;
      else if (b.type === "tool_use") chars += b.name.length + JSON.stringify(b.input).length;
      else chars += b.content?.length ?? 0;
    }
  }
  return chars;
}

export interface DemoOptions {
  memory: MemoryClient;
  steps: Step[];
  /** The model's context window in tokens. */
  window: number;
  processId: string;
  /** Where the script came from, for the header. */
  source: string;
  /** "provider (model)" of the summarizer, for the header. */
  summarizer: string;
  serviceUrl: string;
  /** A progress line every this many turns (and after the last). */
  progressEvery: number;
  write(line: string): void;
}

export interface DemoOutcome {
  turns: number;
  compactions: Record<string, number>;
  /** Turns that did not compact, by reason ("below_threshold" when no mode was reached). */
  notCompacted: Record<string, number>;
  maxPromptTokens: number;
}

/** The active summary, as the demo prints a fold: its mode, what it folded, the prompt before and after. */
async function newestFold(memory: MemoryClient, processId: string) {
  const [newest] = (await memory.listMemories(processId)).items;
  if (!newest) return undefined;
  const m = newest.metadata;
  return { mode: m.mode ?? "HARD", folded: m.compactedMessages, before: m.tokensBefore ?? 0, after: m.tokensAfter ?? 0 };
}

export async function runDemo(o: DemoOptions): Promise<DemoOutcome> {
  const { memory, steps, window, processId, write } = o;
  await memory.upsertProcess(processId, { projectId: "demo", name: "Demo engine", engine: "frankie", recipe: "chat", title: "Conversation replay" });
  const model = { provider: "demo", name: "demo-small", contextWindow: window };

  write(`Vancetope Memory demo at ${o.serviceUrl}`);
  write(`  script:     ${steps.length} turns from ${o.source}`);
  write(`  model:      window ${window} tokens (SOFT at 40%, HARD at 85%, EMERGENCY at 95%)`);
  write(`  summarizer: ${o.summarizer}`);
  write(`  process:    ${processId}`);
  write("");

  // Spawn: the engine's policy (pinned explicitly) and the original task (auto-pinned).
  const spawn: AppendMessageInput[] = [
    { role: "SYSTEM", content: "Policy: answer warmly and briefly; never invent dates.", tags: ["STRENGTH:pinned"] },
    { role: "USER", content: "Please keep track of everything we talk about: people, dates, plans and promises." },
  ];
  for (const m of spawn) await memory.appendMessage(processId, m);

  const byMode: Record<string, number> = {};
  const notCompacted: Record<string, number> = {};
  let sinceProgress: Record<string, number> = {};
  let cacheBreaks = 0;
  let unexplainedBreaks = 0;
  let lastStatic: string | undefined;
  let maxPrompt = 0;
  let requests = 3;
  let last: Turn | undefined;
  const count = (table: Record<string, number>, key: string) => (table[key] = (table[key] ?? 0) + 1);
  const compactionsSoFar = () => Object.values(byMode).reduce((x, y) => x + y, 0);
  const progress = (n: number) => {
    const skipped = Object.entries(sinceProgress).map(([reason, k]) => `${reason} ${k}`).join(", ");
    write(
      `turn ${pad(n, 3)}/${steps.length}  ${plural(compactionsSoFar(), "compaction")} so far, ${plural(last?.messages.length ?? 0, "active message")}, largest prompt ~${maxPrompt} tokens` +
        (skipped ? `; not compacted since the last line: ${skipped}` : ""),
    );
    sinceProgress = {};
  };

  for (const [i, step] of steps.entries()) {
    const n = i + 1;
    const message: AppendMessageInput | undefined = step.user ? { role: "USER", content: step.user } : undefined;
    // One request: append the user's message, compact if needed, get the block and the view.
    // Without `prompt` the service measures the replay itself (summary + active messages).
    const turn = await memory.beginTurn(processId, { ...(message ? { message } : {}), model });
    requests++;
    last = turn;
    const c = turn.compaction;
    const staticPart = turn.context.staticBlock ?? turn.context.block;
    // Below EMERGENCY the worker commits a prepared fold between two turns (docs/compaction.md,
    // "Who commits a prepared fold"): the first answer that replays a new summary reports it.
    const byWorker = !c.compacted && staticPart !== "" && staticPart !== (lastStatic ?? "") ? await newestFold(memory, processId) : undefined;
    if (byWorker) requests++;
    const fold = c.compacted ? { mode: c.mode, folded: c.compactedMessages, before: c.tokensBefore, after: c.tokensAfter } : byWorker;
    if (fold) {
      count(byMode, fold.mode);
      write(
        `turn ${pad(n, 3)}  ${fold.mode.padEnd(9)} folded ${pad(fold.folded, 3)} messages   tokens ${pad(fold.before, 5)} -> ${pad(fold.after, 5)}   active messages now ${pad(turn.messages.length, 3)}`,
      );
    } else {
      const reason = c.reason ?? "below_threshold";
      count(notCompacted, reason);
      count(sinceProgress, reason);
    }
    if (lastStatic !== undefined && staticPart !== lastStatic) {
      cacheBreaks++;
      if (!fold) unexplainedBreaks++;
    }
    lastStatic = staticPart;

    // The prompt the engine sends (Anthropic shape; toOpenAIMessages works the same way).
    const request = toAnthropicRequest(turn, { system: SYSTEM_PROMPT });
    maxPrompt = Math.max(maxPrompt, Math.ceil(promptChars(request) / 4));

    // The "model" answers from the script; tool calls are appended as the engine would.
    const replies: AppendMessageInput[] = [];
    if (step.toolCall) {
      const id = `call_${n}`;
      replies.push(
        { role: "ASSISTANT", content: "Let me check the calendar.", toolCalls: [{ id, name: step.toolCall.name, arguments: JSON.stringify(step.toolCall.args) }] },
        { role: "TOOL", content: step.toolCall.result, toolCallId: id },
      );
    }
    replies.push({ role: "ASSISTANT", content: step.reply });
    for (const [j, reply] of replies.entries()) {
      // A retried request (same key) would not append twice.
      await memory.appendMessage(processId, { ...reply, idempotencyKey: `turn-${n}-${j}` });
      requests++;
    }
    if (n % o.progressEvery === 0 || n === steps.length) progress(n);
  }

  const all = await memory.listMessages(processId, { limit: 1000 });
  const memories = (await memory.listMemories(processId)).items;
  const turns = steps.length;
  const active = last?.messages.length ?? 0;
  write(
    [
      "",
      `Done: ${turns} turns, ${all.items.length} messages stored (${all.items.length - active} archived, ${active} active), ${requests} requests.`,
      `Compactions: ${Object.entries(byMode).map(([m, k]) => `${m} ${k}`).join(", ") || "none"}; ${memories.length} summaries in the chain, ${memories.filter((m) => m.supersededAt === null).length} active.`,
      `Prompt cache: the static block changed on ${cacheBreaks} of ${turns - 1} turns (${compactionsSoFar()} compactions), ${unexplainedBreaks} times without a compaction.`,
      `Largest prompt sent: ~${maxPrompt} tokens (chars/4) for a ${window}-token window.`,
      `Pinned messages still active: ${last?.messages.filter((m) => m.tags.includes("STRENGTH:pinned")).length ?? 0} of 2 (the policy and the original task).`,
    ].join("\n"),
  );
  if (last) {
    const openai = toOpenAIMessages(last, { system: SYSTEM_PROMPT });
    const anthropic = toAnthropicRequest(last, { system: SYSTEM_PROMPT });
    write(
      `Last prompt: OpenAI ${openai.length} messages; Anthropic ${anthropic.system.length} system blocks (cache_control on block ${anthropic.system.findIndex((b) => b.cache_control) + 1}) + ${anthropic.messages.length} messages.`,
    );
    const block = last.context.block;
    write(`\nMemory block of the last turn (${block.length} chars):\n${block.length > 1500 ? `${block.slice(0, 1500)}\n…` : block}`);
  }
  return { turns, compactions: byMode, notCompacted, maxPromptTokens: maxPrompt };
}
