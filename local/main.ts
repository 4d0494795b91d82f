/** `npm start`: the whole service on this machine, until SIGINT/SIGTERM. */
import { startLocalService } from "./server.js";

const service = await startLocalService();
const [key, tenant] = [...service.apiKeys][0]!;
const summarizer = await service.deps.summarizer();
console.log(
  [
    "",
    `Vancetope Memory is running at ${service.url}`,
    `  API key:    ${key} (tenant ${tenant})   ->  Authorization: Bearer ${key}`,
    `  Summarizer: ${summarizer.provider} (${summarizer.model})`,
    `  DynamoDB:   ${service.dynamoEndpoint}, table ${service.tableName}${process.env.MEMORY_DATA_DIR ? `, data in ${process.env.MEMORY_DATA_DIR}` : " (in memory)"}`,
    `  Try:        curl ${service.url}/health`,
    "",
  ].join("\n"),
);

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
