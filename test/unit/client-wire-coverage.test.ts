/**
 * Every type the client package exports (client/index.ts, client/types.ts through it) is either
 * compared with the service in test/types/client-wire.ts or named there as client-only (a shape
 * of the client itself, of OpenAI's or of Anthropic's API, never sent by the service). A new
 * export that is neither fails here, so no wire type can drift unchecked (docs/architecture.md,
 * "Changing things").
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const wireFile = path.join(repoRoot, "test/types/client-wire.ts");

/** The type names (interfaces, type aliases, classes) client/index.ts exports, re-exports resolved. */
function exportedTypeNames(): string[] {
  const entry = path.join(repoRoot, "client/index.ts");
  const program = ts.createProgram({
    rootNames: [entry],
    options: { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true, types: [] },
  });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  const typeFlags = ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum;
  return checker
    .getExportsOfModule(moduleSymbol)
    .filter((s) => ((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & typeFlags) !== 0)
    .map((s) => s.getName())
    .sort();
}

/**
 * What test/types/client-wire.ts covers: each `client.X` named inside an `expectTypeOf` chain (a
 * compile-time comparison), and each name of its `ClientOnly` union.
 */
function coverage(): { compared: Set<string>; clientOnly: Set<string> } {
  const source = ts.createSourceFile(wireFile, readFileSync(wireFile, "utf8"), ts.ScriptTarget.ES2022, true);
  const compared = new Set<string>();
  const clientOnly = new Set<string>();
  const insideExpect = (node: ts.Node): boolean => {
    for (let n: ts.Node | undefined = node; n; n = n.parent) {
      if (ts.isCallExpression(n) && /^expectTypeOf\b/.test(n.getText(source))) return true;
    }
    return false;
  };
  const visit = (node: ts.Node) => {
    if (ts.isTypeReferenceNode(node) && ts.isQualifiedName(node.typeName) && node.typeName.left.getText(source) === "client") {
      if (insideExpect(node)) compared.add(node.typeName.right.text);
    }
    if (ts.isTypeAliasDeclaration(node) && node.name.text === "ClientOnly") {
      for (const literal of node.type.getText(source).matchAll(/"([A-Za-z]+)"/g)) clientOnly.add(literal[1]!);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { compared, clientOnly };
}

describe("the client's exported types", () => {
  const exported = exportedTypeNames();
  const { compared, clientOnly } = coverage();

  it("reads the exports (the wire types and the client's own)", () => {
    for (const name of ["Turn", "MemoryContext", "ContextSection", "RangeCompactionResult", "SearchHit", "Page", "MemoryClient"]) {
      expect(exported).toContain(name);
    }
  });

  it("are each compared with the service in test/types/client-wire.ts, or named there as client-only", () => {
    const unchecked = exported.filter((name) => !compared.has(name) && !clientOnly.has(name));
    expect(unchecked).toEqual([]);
  });

  it("name as client-only only what the client exports and never compares", () => {
    expect([...clientOnly].filter((name) => !exported.includes(name))).toEqual([]);
    expect([...clientOnly].filter((name) => compared.has(name))).toEqual([]);
  });
});
