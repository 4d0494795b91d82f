/**
 * test/types/openapi.d.ts, the types the generated client's session and the npm client's wire check
 * compile against, is what openapi-typescript generates from the committed docs/openapi.json.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { renderOpenApiTypes, TYPES_FILE } from "../../scripts/openapi-types.js";

it("test/types/openapi.d.ts is current with docs/openapi.json (else: npm run openapi:types)", async () => {
  expect(readFileSync(TYPES_FILE, "utf8") === (await renderOpenApiTypes()), "test/types/openapi.d.ts is stale: run npm run openapi:types").toBe(true);
});
