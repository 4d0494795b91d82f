/**
 * The contract only grows within a major version: against the committed snapshot of the current
 * major (docs/openapi.v<major>.snapshot.json), the generated document removes or renames no path,
 * operation, parameter, field or enum value. A breaking change needs a new major `info.version`
 * (tools/openapi/document.ts, API_VERSION) and a snapshot of it; additions pass.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { breakingChanges, majorOf } from "../../tools/openapi/compat.js";
import { buildOpenApiDocument } from "../../tools/openapi/document.js";

type Json = Record<string, any>;
const current = buildOpenApiDocument() as Json;
const snapshotFile = `docs/openapi.v${majorOf(current)}.snapshot.json`;
const snapshot = (): Json => JSON.parse(readFileSync(snapshotFile, "utf8"));
const clone = (doc: Json): Json => structuredClone(doc);

describe("the contract within its major version", () => {
  it("has a committed snapshot of its major version", () => {
    expect(existsSync(snapshotFile), `${snapshotFile}: commit a copy of docs/openapi.json for this major version`).toBe(true);
    expect(majorOf(snapshot())).toBe(majorOf(current));
  });

  it("removes or renames nothing the snapshot has", () => {
    expect(breakingChanges(snapshot(), current)).toEqual([]);
  });
});

describe("the compatibility check itself", () => {
  it("reports a removed answer field, however deep (a shared schema once, where it is first reached)", () => {
    const after = clone(current);
    delete after.components.schemas.Message.properties.tokens;
    delete after.components.schemas.MemoryMetadata.properties.loss.properties.kept;
    const changes = breakingChanges(current, after);
    expect(changes).toContain("field removed: GET /v1/processes/{processId}/memories 200.items[].metadata.loss.kept");
    expect(changes.filter((c) => c.endsWith(".tokens"))).toEqual(["field removed: GET /v1/processes/{processId}/messages 200.items[].tokens"]);
    expect(changes).toHaveLength(2);
  });

  it("reports a renamed request field as a removal", () => {
    const after = clone(current);
    const input = after.components.schemas.TurnInput.properties;
    input.promptSize = input.prompt;
    delete input.prompt;
    expect(breakingChanges(current, after)).toEqual(["field removed: POST /v1/processes/{processId}/turns body.prompt"]);
  });

  it("reports a removed enum value, path, operation and query parameter", () => {
    const after = clone(current);
    after.components.schemas.MessageInput.properties.role.enum = ["USER", "ASSISTANT", "SYSTEM"];
    delete after.paths["/v1/inbox"];
    delete after.paths["/v1/settings"].put;
    after.paths["/v1/processes"].get.parameters = after.paths["/v1/processes"].get.parameters.filter((p: Json) => p.name !== "cursor");
    const changes = breakingChanges(current, after);
    expect(changes).toContain('enum value removed: POST /v1/processes/{processId}/messages body.role "TOOL"');
    expect(changes).toContain("operation removed: GET /v1/inbox");
    expect(changes).toContain("operation removed: PUT /v1/settings");
    expect(changes).toContain("parameter removed: GET /v1/processes query cursor");
  });

  it("lets additions pass: a new field, enum value, path and optional parameter", () => {
    const after = clone(current);
    after.components.schemas.Message.properties.summaryOf = { type: "string" };
    after.components.schemas.MessageInput.properties.role.enum.push("DEVELOPER");
    after.paths["/v1/things"] = { get: { responses: { 200: { description: "new" } } } };
    after.paths["/v1/processes"].get.parameters.push({ name: "order", in: "query", required: false, schema: { type: "string" } });
    expect(breakingChanges(current, after)).toEqual([]);
  });
});
