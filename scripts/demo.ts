/**
 * `npm run demo`: a simulated engine drives a long chat session (200+ turns) through the client
 * against the local runner (in process, DynamoDB Local included, offline summarizer) with a small
 * model window, and prints every compaction as it happens.
 * Options: --window <tokens> (default 8000), --turns <n>, --generated (skip LoCoMo).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createMemoryClient, toAnthropicRequest, toOpenAIMessages, type AppendMessageInput, type Turn } from "../client/index.js";
import { startLocalService, type LocalService } from "../local/server.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CONVERSATION = path.resolve(REPO_ROOT, "../shared/data/locomo/conv-26.json");
const API_KEY = "demo-key";
const SYSTEM_PROMPT =
  "You are Melanie's side of a long-running chat with Caroline. Stay consistent with everything said before, " +
  "including what is only in the compacted summary. Use calendar_lookup when a date matters.";

const { values: args } = parseArgs({
  options: {
    window: { type: "string", default: "8000" },
    turns: { type: "string", default: "400" },
    generated: { type: "boolean", default: false },
  },
});
const WINDOW = Number(args.window);
const MAX_TURNS = Number(args.turns);
if (!Number.isInteger(WINDOW) || WINDOW < 1000 || !Number.isInteger(MAX_TURNS) || MAX_TURNS < 1) {
  console.error("usage: npm run demo -- [--window <tokens, at least 1000>] [--turns <n>] [--generated]");
  process.exit(2);
}

/** One step of the script: the user's message (absent when the assistant speaks first) and the reply. */
interface Step {
  user?: string;
  reply: string;
  toolCall?: { name: string; args: Record<string, unknown>; result: string };
}

// ------------------------------------------------------------------------------- the script

interface LocomoTurn {
  speaker: string;
  text: string;
  blip_caption?: string;
}

/** LoCoMo conv-26 (read at run time, never copied): speaker A is the user, speaker B the engine. */
function locomoSteps(file: string): { steps: Step[]; source: string } {
  const conv = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const userName = conv.speaker_a as string;
  const steps: Step[] = [];
  for (let n = 1; Array.isArray(conv[`session_${n}`]) || conv[`session_${n}_date_time`]; n++) {
    const lines = (conv[`session_${n}`] as LocomoTurn[] | undefined) ?? [];
    if (lines.length === 0) continue;
    // Consecutive lines of one speaker form one message.
    const utterances: Array<{ user: boolean; text: string }> = [];
    for (const l of lines) {
      const text = l.blip_caption ? `${l.text} [shares a photo: ${l.blip_caption}]` : l.text;
      const last = utterances[utterances.length - 1];
      if (last && last.user === (l.speaker === userName)) last.text += ` ${text}`;
      else utterances.push({ user: l.speaker === userName, text });
    }
    // The session's date opens its first message, as a chat app would show it.
    const when = String(conv[`session_${n}_date_time`] ?? "").replace(/^.* on /, "");
    if (when && utterances[0]) utterances[0].text = `[${when}] ${utterances[0].text}`;
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
  return { steps, source: `LoCoMo conv-26 (${userName} and ${conv.speaker_b as string}, ${path.relative(process.cwd(), file)})` };
}

/** Fallback when the LoCoMo folder is missing: a varied planning conversation. */
function generatedSteps(): { steps: Step[]; source: string } {
  const people = ["Priya", "Tomás", "Ingrid", "Kwame", "Mei", "Oskar"];
  const cities = ["Lisbon", "Osaka", "Montreal", "Nairobi", "Tallinn", "Valparaíso"];
  const things = ["the venue deposit", "the catering menu", "the keynote slides", "the travel grants", "the badge printing", "the livestream rig"];
  const steps: Step[] = [];
  for (let i = 0; i < 230; i++) {
    const who = people[i % people.length]!;
    const city = cities[(i * 7) % cities.length]!;
    const thing = things[(i * 5) % things.length]!;
    const day = 1 + ((i * 11) % 28);
    const amount = 200 + ((i * 137) % 4800);
    steps.push({
      user: `${who} says ${thing} for the ${city} meetup will cost about ${amount} EUR; can we lock it in before March ${day}?`,
      reply: `Noted: ${thing} in ${city} at ${amount} EUR, owner ${who}, deadline March ${day}. I will flag it if the budget of ${amount + 1000} EUR is at risk.`,
    });
  }
  return { steps, source: "a generated planning conversation" };
}

const ACKS = ["ok thanks!", "Thanks!", "got it, thanks", "sounds good", "great, thank you!"];
const MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December";
const DATE_MENTION = new RegExp(`\\b(\\d{1,2} (${MONTHS}),? \\d{4}|(${MONTHS}) \\d{1,2}|yesterday|last (week|month|year)|next (week|month))\\b`, "i");

/** Adds an acknowledgement turn now and then (weak: SOFT folds them) and a tool call now and then. */
function withEngineHabits(steps: Step[]): Step[] {
  const out: Step[] = [];
  steps.forEach((s, i) => {
    const dated = DATE_MENTION.test(s.reply);
    out.push(dated && i % 3 === 0 ? { ...s, toolCall: { name: "calendar_lookup", args: { about: s.reply.slice(0, 60) }, result: `No conflicting events found (lookup ${i}).` } } : s);
    if (i % 9 === 8) out.push({ user: ACKS[Math.floor(i / 9) % ACKS.length]!, reply: "No problem!" });
  });
  return out;
}

// -------------------------------------------------------------------------------- the engine

const pad = (v: unknown, n: number) => String(v).padStart(n);

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

async function main() {
  const started = Date.now();
  const { steps: raw, source } = !args.generated && existsSync(CONVERSATION) ? locomoSteps(CONVERSATION) : generatedSteps();
  const steps = withEngineHabits(raw).slice(0, MAX_TURNS);

  const service: LocalService = await startLocalService({
    port: 0,
    quiet: true,
    env: { ...process.env, SUMMARIZER: process.env.SUMMARIZER ?? "offline", MEMORY_API_KEYS: `${API_KEY}=demo` },
  });
  const stop = async () => service.stop();
  // Never leave DynamoDB Local (a child java process) behind: stop it on a signal, and when the
  // output goes away (`npm run demo | head`), which would otherwise crash the process with EPIPE.
  const stopAndExit = (code: number) => void stop().finally(() => process.exit(code));
  const signals = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
  for (const [signal, code] of Object.entries(signals)) process.once(signal, () => stopAndExit(code));
  process.stdout.on("error", () => stopAndExit(0));

  try {
    const memory = createMemoryClient({ baseUrl: service.url, apiKey: API_KEY });
    const summarizer = await service.deps.summarizer();
    const processId = `demo-${Date.now().toString(36)}`;
    await memory.upsertProcess(processId, { projectId: "demo", name: "Melanie", engine: "frankie", recipe: "chat", title: "LoCoMo replay" });
    const model = { provider: "demo", name: "demo-small", contextWindow: WINDOW };

    console.log(`Vancetope Memory demo at ${service.url}`);
    console.log(`  script:     ${steps.length} turns from ${source}`);
    console.log(`  model:      window ${WINDOW} tokens (SOFT at 40%, HARD at 85%, EMERGENCY at 95%)`);
    console.log(`  summarizer: ${summarizer.provider} (${summarizer.model})`);
    console.log(`  process:    ${processId}\n`);

    // Spawn: the engine's policy (pinned explicitly, spec §5.1) and the original task (auto-pinned).
    const spawn: AppendMessageInput[] = [
      { role: "SYSTEM", content: "Policy: answer warmly and briefly; never invent dates.", tags: ["STRENGTH:pinned"] },
      { role: "USER", content: "Please keep track of everything we talk about: people, dates, plans and promises." },
    ];
    for (const m of spawn) await memory.appendMessage(processId, m);

    const byMode: Record<string, number> = {};
    let cacheBreaks = 0;
    let unexplainedBreaks = 0;
    let lastStatic: string | undefined;
    let maxPrompt = 0;
    let requests = 3;
    let last: Turn | undefined;

    for (const [i, step] of steps.entries()) {
      const n = i + 1;
      const message: AppendMessageInput | undefined = step.user ? { role: "USER", content: step.user } : undefined;
      // One request: append the user's message, compact if needed, get the block and the view.
      // Without `prompt` the service measures the replay itself (summary + active messages).
      const turn = await memory.beginTurn(processId, { ...(message ? { message } : {}), model });
      requests++;
      last = turn;
      const c = turn.compaction;
      if (c.compacted) {
        byMode[c.mode] = (byMode[c.mode] ?? 0) + 1;
        console.log(
          `turn ${pad(n, 3)}  ${c.mode.padEnd(9)} folded ${pad(c.compactedMessages, 3)} messages   tokens ${pad(c.tokensBefore, 5)} -> ${pad(c.tokensAfter, 5)}   active messages now ${pad(turn.messages.length, 3)}`,
        );
      } else if (c.reason && c.reason !== "nothing_eligible" && c.reason !== "keep_recent") {
        console.log(`turn ${pad(n, 3)}  ${c.mode.padEnd(9)} not compacted: ${c.reason}`);
      }
      const staticPart = turn.context.staticBlock ?? turn.context.block;
      if (lastStatic !== undefined && staticPart !== lastStatic) {
        cacheBreaks++;
        if (!c.compacted) unexplainedBreaks++;
      }
      lastStatic = staticPart;

      // The prompt the engine sends (Anthropic shape; toOpenAIMessages works the same way).
      const request = toAnthropicRequest(turn, { system: SYSTEM_PROMPT });
      const chars = promptChars(request);
      maxPrompt = Math.max(maxPrompt, Math.ceil(chars / 4));

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
    }

    const all = await memory.listMessages(processId, { limit: 1000 });
    const memories = (await memory.listMemories(processId)).items;
    const turns = steps.length;
    const active = last?.messages.length ?? 0;
    const compactions = Object.values(byMode).reduce((x, y) => x + y, 0);
    console.log(
      [
        "",
        `Done: ${turns} turns, ${all.items.length} messages stored (${all.items.length - active} archived, ${active} active), ${requests} requests.`,
        `Compactions: ${Object.entries(byMode).map(([m, k]) => `${m} ${k}`).join(", ") || "none"}; ${memories.length} summaries in the chain, ${memories.filter((m) => m.supersededAt === null).length} active.`,
        `Prompt cache: the static block changed on ${cacheBreaks} of ${turns - 1} turns (${compactions} compactions), ${unexplainedBreaks} times without a compaction.`,
        `Largest prompt sent: ~${maxPrompt} tokens (chars/4) for a ${WINDOW}-token window.`,
        `Pinned messages still active: ${last?.messages.filter((m) => m.tags.includes("STRENGTH:pinned")).length ?? 0} of 2 (the policy and the original task).`,
      ].join("\n"),
    );
    if (last) {
      const openai = toOpenAIMessages(last, { system: SYSTEM_PROMPT });
      const anthropic = toAnthropicRequest(last, { system: SYSTEM_PROMPT });
      console.log(
        `Last prompt: OpenAI ${openai.length} messages; Anthropic ${anthropic.system.length} system blocks (cache_control on block ${anthropic.system.findIndex((b) => b.cache_control) + 1}) + ${anthropic.messages.length} messages.`,
      );
      const block = last.context.block;
      console.log(`\nMemory block of the last turn (${block.length} chars):\n${block.length > 1500 ? `${block.slice(0, 1500)}\n…` : block}`);
    }
    console.log(`\nFinished in ${((Date.now() - started) / 1000).toFixed(1)} s; stopping the local runner.`);
  } finally {
    await stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
