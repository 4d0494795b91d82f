/**
 * `npm run openapi:types`: writes test/types/openapi.d.ts, the TypeScript types openapi-typescript
 * generates from docs/openapi.json, as an engine would generate them. The generated client's session
 * (test/e2e/openapi-client.test.ts) and the npm client's wire check (test/types/client-openapi.ts)
 * use them; test/unit/openapi-types.test.ts fails when the file is not what the document generates.
 */
import { readFileSync, writeFileSync } from "node:fs";
import openapiTS, { astToString } from "openapi-typescript";
import { runAsScript } from "./cli.js";

export const TYPES_FILE = new URL("../test/types/openapi.d.ts", import.meta.url);
const DOCUMENT_FILE = new URL("../docs/openapi.json", import.meta.url);

const HEADER = "// Generated from docs/openapi.json by `npm run openapi:types` (openapi-typescript). Do not edit.\n\n";

/** The types file's text for the committed document. */
export async function renderOpenApiTypes(): Promise<string> {
  // Parsed here, so the generator reads no file or address itself.
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8"));
  return HEADER + astToString(await openapiTS(document));
}

await runAsScript(import.meta.url, async (_argv, io) => {
  writeFileSync(TYPES_FILE, await renderOpenApiTypes());
  io.out("test/types/openapi.d.ts: written");
  return 0;
});
