/**
 * The type checks `npm test` runs beside its tests (tsconfig.checks.json): the inspector's
 * JavaScript modules (// @ts-check, JSDoc types from client/types.ts) and the compile-time
 * comparisons of client/types.ts with the service's models (test/types/client-wire.ts) and with the
 * types generated from docs/openapi.json (test/types/client-openapi.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const configPath = path.join(repoRoot, "tsconfig.checks.json");
const scratch = mkdtempSync(path.join(tmpdir(), "type-checks-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  },
})!;

let program: ts.Program | undefined;
/** Errors of the configured files plus `extra` (the previous program is reused, so a rerun is quick). */
function check(extra: string[] = []): string[] {
  program = ts.createProgram({ rootNames: [...config.fileNames, ...extra], options: config.options, oldProgram: program });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${path.relative(repoRoot, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : "";
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

const rel = (file: string) => path.join(repoRoot, file).split(path.sep).join("/");

describe("type checks", () => {
  it("cover every inspector module and the client-to-server comparison", () => {
    const files = config.fileNames.map((f) => path.relative(repoRoot, f).split(path.sep).join("/"));
    for (const f of ["web/inspector.js", "web/api.js", "web/timeline.js", "web/config.js", "test/types/client-wire.ts", "test/types/client-openapi.ts"]) expect(files).toContain(f);
    expect(config.options.checkJs).toBe(true);
  });

  it("pass: the inspector and client/types.ts agree with the service", () => {
    expect(check()).toEqual([]);
  }, 180_000);

  it("would catch a page that misreads a client type, and a client type that drifts", () => {
    const page = path.join(scratch, "page.js");
    writeFileSync(
      page,
      `// @ts-check\n/** @param {import("${rel("client/types.ts")}").Memory} m */\nexport const t = (m) => m.tokens.toUpperCase();\n`,
    );
    const drift = path.join(scratch, "drift.ts");
    writeFileSync(
      drift,
      [
        `import { expectTypeOf } from "vitest";`,
        `import type * as server from "${rel("core/domain/model.ts")}";`,
        `type OldClientMessage = Omit<server.Message, "tokens"> & { tokens?: number };`,
        `expectTypeOf<OldClientMessage>().toEqualTypeOf<server.Message>();`,
      ].join("\n"),
    );
    const documentDrift = path.join(scratch, "stale-wire.ts");
    writeFileSync(
      documentDrift,
      [
        `import { expectTypeOf } from "vitest";`,
        `import type { components } from "${rel("test/types/openapi.js")}";`,
        `type Wire = components["schemas"]["Message"];`,
        `type OldClientMessage = Omit<Wire, "tokens"> & { tokens?: number };`,
        `expectTypeOf<OldClientMessage>().toEqualTypeOf<Wire>();`,
      ].join("\n"),
    );
    const errors = check([page, drift, documentDrift]);
    expect(errors.some((e) => e.includes("page.js") && e.includes("toUpperCase"))).toBe(true);
    expect(errors.some((e) => e.includes("drift.ts"))).toBe(true);
    expect(errors.some((e) => e.includes("stale-wire.ts"))).toBe(true);
  }, 180_000);
});
