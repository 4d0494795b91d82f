/**
 * docs/openapi.json passes Redocly's linter (`@redocly/cli lint`, offline) under redocly.yaml:
 * the recommended rules with warnings as errors (request examples checked against their schemas
 * among them), and only the exceptions that file lists and justifies.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { redocly } from "../../tools/openapi/redocly.js";

const scratch = mkdtempSync(path.join(tmpdir(), "vtm-lint-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const lint = (file: string) => redocly(["lint", file, "--config", "redocly.yaml", "--format", "json"]);

describe("redocly lint", () => {
  it("passes on docs/openapi.json with no problem of any severity", async () => {
    const { code, stdout, stderr } = await lint("docs/openapi.json");
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout).totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  }, 120_000);

  it("fails on a request example that does not fit its schema (the lint is real)", async () => {
    const doc = JSON.parse(readFileSync("docs/openapi.json", "utf8"));
    doc.paths["/v1/processes/{processId}/turns"].post.requestBody.content["application/json"].example.model.contextWindow = "big";
    const bad = path.join(scratch, "bad.json");
    writeFileSync(bad, JSON.stringify(doc));
    const { code, stdout } = await lint(bad);
    expect(code).not.toBe(0);
    expect(JSON.parse(stdout).problems.map((p: { ruleId: string }) => p.ruleId)).toContain("no-invalid-media-type-examples");
  }, 120_000);

  it("disables only the rules redocly.yaml justifies, each with a comment", () => {
    const lines = readFileSync("redocly.yaml", "utf8").split("\n");
    const off = lines.flatMap((l, i) => (/^\s+[\w-]+:\s*off\s*$/.test(l) ? [i] : []));
    expect(off.map((i) => lines[i]!.trim())).toEqual(["operation-4xx-response: off", "info-license: off"]);
    for (const i of off) expect(lines[i - 1]!.trim().startsWith("#"), lines[i]).toBe(true);
  });
});
