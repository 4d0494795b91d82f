/** `npm start`: the whole service on this machine, until SIGINT/SIGTERM. */
import { readLocalEnv } from "../core/composition/env.js";
import { startLocalService } from "./server.js";

const service = await startLocalService();
const { dataDir } = readLocalEnv(process.env);
const [key, tenant] = [...service.apiKeys][0]!;
const summarizer = await service.deps.summarizer();
console.log(
  [
    "",
    `Vancetope Memory is running at ${service.url}`,
    `  API key:    ${key} (tenant ${tenant})   ->  Authorization: Bearer ${key}`,
    `  Summarizer: ${summarizer.provider} (${summarizer.model})`,
    `  DynamoDB:   ${service.dynamoEndpoint}, table ${service.tableName}${dataDir ? `, data in ${dataDir}` : " (in memory)"}`,
    `  Blobs:      ${service.blobStorage.location}${service.blobStorage.temporary ? " (removed on stop, like the table)" : ""}`,
    `  API:        ${service.url}/reference (reference), ${service.url}/openapi.json (OpenAPI 3.1)`,
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
