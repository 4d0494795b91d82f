/** `npm start`: the whole service on this machine, until SIGINT/SIGTERM. */
import { readLocalEnv } from "../core/composition/env.js";
import { PortInUseError, startLocalService } from "./server.js";

// startLocalService stops whatever it started (DynamoDB Local included) before it rejects.
const service = await startLocalService().catch((e: unknown) => {
  if (e instanceof PortInUseError) console.error(`Cannot start: ${e.message}`);
  else console.error("Cannot start the local runner:", e);
  process.exit(1);
});
const { dataDir } = readLocalEnv(process.env);
const [key, tenant] = [...service.apiKeys][0]!;
const summarizer = await service.deps.summarizer();
// Listen before the banner: whoever reads it may press Ctrl-C (or send SIGTERM) at once.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping (DynamoDB Local included)…`);
    await service.stop();
    process.exit(0);
  });
}

console.log(
  [
    "",
    `Vancetope Memory is running at ${service.url}`,
    `  API key:    ${key} (tenant ${tenant})   ->  Authorization: Bearer ${key}`,
    `  Summarizer: ${summarizer.provider} (${summarizer.model})`,
    ...(summarizer.provider === "offline"
      ? [
          "              for wiring and tests, not real summaries: set OPENAI_API_KEY, ANTHROPIC_API_KEY or",
          "              OPENAI_BASE_URL (vLLM, Ollama) for an LLM's summaries (docs/summarizers.md)",
        ]
      : []),
    `  DynamoDB:   ${service.dynamoEndpoint}, table ${service.tableName}${dataDir ? `, data in ${dataDir}` : " (in memory)"}`,
    `  Blobs:      ${service.blobStorage.location}${service.blobStorage.temporary ? " (removed on stop, like the table)" : ""}`,
    `  Inspector:  ${service.url}/ (a process's messages, summaries and search)`,
    `  API:        ${service.url}/reference (reference), ${service.url}/openapi.json (OpenAPI 3.1)`,
    `  Try:        curl ${service.url}/health`,
    "",
  ].join("\n"),
);

