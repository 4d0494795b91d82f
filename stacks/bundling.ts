/**
 * The one place the production bundle of every Lambda is configured. The stack hands
 * `nodejsBundling` to SST's Function (`nodejs` props); test/infra/bundle.test.ts builds with
 * `productionBuildOptions`, which reproduces what SST v2.49's node handler passes to esbuild in
 * `sst deploy` from those same props, and checks the result byte-for-byte against SST's own build.
 *
 * The AWS SDK v3 is bundled, not left to the Lambda runtime's copy: the functions then run the
 * exact SDK version the tests ran (lib-dynamodb marshalling, the transaction error shapes the store
 * relies on), minified and tree-shaken into one file, with no dependence on when AWS updates it.
 */
import type { BuildOptions } from "esbuild";
import type { NodeJSProps } from "sst/constructs";

/**
 * Lambda runs Node 22 (nodejs20.x is being retired); the same code runs on Node 20 locally and in
 * the tests, and test/infra/bundle.test.ts loads every bundle under both (docs/deploy.md).
 */
export const LAMBDA_RUNTIME = "nodejs22.x" as const;
export const LAMBDA_ARCHITECTURE = "arm_64" as const;
export const ESBUILD_TARGET = "node22";

/**
 * The ESM banner SST prepends to every `format: "esm"` bundle (node_modules/sst/runtime/handlers/
 * node.js): CommonJS dependencies bundled into ESM still call `require`/`__dirname`. SST adds it
 * itself, so it must NOT be repeated in `nodejs.banner` (a second `const require` is a SyntaxError).
 */
export const ESM_BANNER = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
].join("\n");

/** Packages SST never bundles (native addons); none of ours use them. */
const SST_FORCED_EXTERNALS = ["sharp", "pg-native"];

/** The SDK's default credential chain, and what the bundles use instead (paths from the repository root). */
export const CREDENTIAL_CHAIN = "@aws-sdk/credential-provider-node";
export const LAMBDA_CREDENTIALS = "./core/adapters/aws/env-credentials.ts";

/** The `nodejs` props of every function (SST Function). */
export const nodejsBundling = {
  format: "esm",
  minify: true,
  // Source maps would double the upload and slow cold starts; stack traces name minified code.
  sourcemap: false,
  esbuild: {
    target: ESBUILD_TARGET,
    // License comments stay out of the deployed file (they are in node_modules).
    legalComments: "none",
    // In Lambda the role's keys are in the environment: the SDK's default credential chain is
    // reduced to that link (core/adapters/aws/env-credentials.ts explains why).
    alias: { [CREDENTIAL_CHAIN]: LAMBDA_CREDENTIALS },
  },
} satisfies NodeJSProps;

/**
 * The esbuild options `sst deploy` uses for one entry with `nodejsBundling` (SST v2.49.8,
 * runtime/handlers/node.js, deploy mode), for building the same bundle outside SST.
 */
export function productionBuildOptions(entry: string, outfile: string): BuildOptions {
  const { esbuild: override, minify, sourcemap } = nodejsBundling;
  return {
    entryPoints: [entry],
    platform: "node",
    external: [...SST_FORCED_EXTERNALS],
    keepNames: true,
    bundle: true,
    logLevel: "silent",
    metafile: true,
    format: "esm",
    // SST's default is "esnext"; nodejsBundling.esbuild overrides it below, as in SST.
    mainFields: ["module", "main"],
    banner: { js: [ESM_BANNER, ""].join("\n") },
    outfile,
    sourcemap,
    minify,
    ...override,
  };
}
