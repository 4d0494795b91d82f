/**
 * `npm run demo`: a simulated engine drives a long chat session (200+ turns) through the client
 * against the local runner (in process, DynamoDB Local included, offline summarizer) with a small
 * model window, and prints each compaction as it happens plus a progress line every 50 turns
 * (scripts/demo-core.ts). The script is LoCoMo's conv-26 when the data is there (data/locomo/,
 * filled by `npm run data:locomo`, or LOCOMO_DIR), else the built-in generated conversation.
 * Options: --window <tokens> (default 8000), --turns <n>, --generated (skip LoCoMo).
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
  },
});
const WINDOW = Number(args.window);
const MAX_TURNS = Number(args.turns);
if (!Number.isInteger(WINDOW) || WINDOW < 1000 || !Number.isInteger(MAX_TURNS) || MAX_TURNS < 1) {
  console.error("usage: npm run demo -- [--window <tokens, at least 1000>] [--turns <n>] [--generated]");
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

async function main() {
  const started = Date.now();
  const { conv, source } = chooseConversation();
  const steps = withEngineHabits(conversationSteps(conv)).slice(0, MAX_TURNS);

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
