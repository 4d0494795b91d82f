/**
 * `npm run demo`: a simulated engine drives a long chat session (200+ turns) through the client
 * against the local runner (in process, DynamoDB Local included, offline summarizer) with a small
 * model window, and prints each compaction as it happens plus a progress line every 50 turns
 * (scripts/demo-core.ts). The script is LoCoMo's conv-26 when the data is there (data/locomo/,
 * filled by `npm run data:locomo`, or LOCOMO_DIR), else the built-in generated conversation.
 * Options: --window <tokens> (default 8000), --turns <n>, --generated (skip LoCoMo), --url <service>
 * (or MEMORY_URL): play the session into a running service, e.g. `npm start`'s, and keep it there
 * for the inspector, with --key or MEMORY_API_KEY (default local-dev-key).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { generatedConversations } from "../bench/support/generated-conversation.js";
import { loadConversation, locomoDir } from "../bench/support/locomo.js";
import { createMemoryClient } from "../client/index.js";
import { startLocalService, type LocalService } from "../local/server.js";
import { conversationSteps, runDemo, withEngineHabits } from "./demo-core.js";

const API_KEY = "demo-key";
const LOCOMO_CONVERSATION = "conv-26";

const { values: args } = parseArgs({
  options: {
    window: { type: "string", default: "8000" },
    turns: { type: "string", default: "400" },
    generated: { type: "boolean", default: false },
    url: { type: "string" },
    key: { type: "string" },
  },
});
/** A running service to play into (kept afterwards), or none: then a runner of its own, stopped at the end. */
const TARGET = (args.url ?? process.env.MEMORY_URL)?.trim().replace(/\/+$/, "") || undefined;
const TARGET_KEY = args.key ?? process.env.MEMORY_API_KEY ?? "local-dev-key";
const WINDOW = Number(args.window);
const MAX_TURNS = Number(args.turns);
if (!Number.isInteger(WINDOW) || WINDOW < 1000 || !Number.isInteger(MAX_TURNS) || MAX_TURNS < 1) {
  console.error("usage: npm run demo -- [--window <tokens, at least 1000>] [--turns <n>] [--generated] [--url <running service> [--key <API key>]]");
  process.exit(2);
}

/** LoCoMo's conv-26 when it is there, else the built-in conversation (and a line that says why). */
function chooseConversation() {
  const file = path.join(locomoDir(), `${LOCOMO_CONVERSATION}.json`);
  if (!args.generated && existsSync(file)) {
    const conv = loadConversation(file);
    return { conv, source: `LoCoMo ${conv.id} (${conv.speakerA} and ${conv.speakerB}, ${path.relative(process.cwd(), file)})` };
  }
  if (!args.generated) console.log(`No LoCoMo data at ${file} (run \`npm run data:locomo\` or set LOCOMO_DIR); using the built-in conversation.`);
  const conv = generatedConversations()[0]!;
  return { conv, source: `the built-in generated conversation ${conv.id} (${conv.speakerA} and ${conv.speakerB})` };
}

/** Plays the demo into the service at TARGET; the session stays there, to open in the inspector. */
async function intoRunningService(steps: Parameters<typeof runDemo>[0]["steps"], source: string) {
  const memory = createMemoryClient({ baseUrl: TARGET!, apiKey: TARGET_KEY });
  try {
    await memory.health({ maxRetries: 0, timeout: 5000 });
  } catch (e) {
    console.error(`No service answers at ${TARGET} (${(e as Error).message}); start one with \`npm start\`, or leave out --url and MEMORY_URL.`);
    process.exit(1);
  }
  const processId = `demo-${Date.now().toString(36)}`;
  await runDemo({
    memory,
    steps,
    window: WINDOW,
    processId,
    source,
    summarizer: "the service's own (its startup banner names it)",
    serviceUrl: TARGET!,
    progressEvery: 50,
    write: (line) => console.log(line),
  });
  console.log(`\nThe session stays in the service: open ${TARGET}/?process=${encodeURIComponent(processId)} in the inspector.`);
}

async function main() {
  const started = Date.now();
  const { conv, source } = chooseConversation();
  const steps = withEngineHabits(conversationSteps(conv)).slice(0, MAX_TURNS);
  if (TARGET) return intoRunningService(steps, source);

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
    const summarizer = await service.deps.summarizer();
    await runDemo({
      memory: createMemoryClient({ baseUrl: service.url, apiKey: API_KEY }),
      steps,
      window: WINDOW,
      processId: `demo-${Date.now().toString(36)}`,
      source,
      summarizer: `${summarizer.provider} (${summarizer.model})`,
      serviceUrl: service.url,
      progressEvery: 50,
      write: (line) => console.log(line),
    });
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
