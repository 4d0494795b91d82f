/**
 * `npm run openapi`: writes the contract's generated documents, docs/openapi.json (OpenAPI 3.1)
 * and docs/events.schema.json (the event catalogue), from the zod schemas the routes and handlers
 * parse with. `--check` writes nothing and exits 1 when a committed file differs from what the
 * code generates (test/unit/openapi-document.test.ts checks the same in `npm test`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generatedFiles } from "../tools/openapi/document.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
let stale = 0;
for (const [file, text] of Object.entries(generatedFiles())) {
  const full = path.join(root, file);
  let current: string | undefined;
  try {
    current = readFileSync(full, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) {
    console.log(`${file}: up to date`);
  } else if (check) {
    stale++;
    console.error(`${file}: differs from the code; run npm run openapi`);
  } else {
    writeFileSync(full, text);
    console.log(`${file}: written`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
