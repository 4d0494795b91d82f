/**
 * The tree shows the layers (README "Code layout"): functions/ holds the Lambda entries of the
 * handler table and nothing else; the domain and the services never import an adapter, and the
 * HTTP request shapes live in the HTTP adapter, not in the domain.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { HANDLERS } from "../../stacks/handlers.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(rel) : [rel];
  });
}

const importsOf = (file: string) =>
  [...readFileSync(path.join(repoRoot, file), "utf8").matchAll(/^import[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);

describe("code layout", () => {
  it("functions/ holds exactly the entries of the handler table", () => {
    const entries = Object.values(HANDLERS).map((h) => h.entry).sort();
    expect(filesUnder("functions").sort()).toEqual(entries);
  });

  it("the domain and the services import no adapter and no composition", () => {
    const offenders = [...filesUnder("core/domain"), ...filesUnder("core/services")].flatMap((f) =>
      importsOf(f)
        .filter((i) => /\/(adapters|composition)\//.test(i) || i === "hono" || i.startsWith("@aws-sdk/"))
        .map((i) => `${f} -> ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it("HTTP request shapes live in the HTTP adapter", () => {
    const domain = filesUnder("core/domain").map((f) => readFileSync(path.join(repoRoot, f), "utf8"));
    for (const name of ["MAX_BODY_BYTES", "ListMessagesQuery", "TurnBody", "SettingsQuery"]) {
      expect(domain.some((text) => new RegExp(`export const ${name}\\b`).test(text)), name).toBe(false);
    }
    expect(filesUnder("core/adapters/http")).toContain(path.join("core", "adapters", "http", "schemas.ts"));
  });
});
