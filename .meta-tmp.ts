import * as esbuild from "esbuild";
import { productionBuildOptions } from "./stacks/bundling.ts";
const plugin: esbuild.Plugin = { name: "x", setup(b) { b.onResolve({ filter: /\/s3-blob-store\.js$/ }, () => ({ path: "s3", namespace: "no-s3" })); b.onLoad({ filter: /.*/, namespace: "no-s3" }, () => ({ contents: "export const createS3Client = () => { throw new Error('no S3'); }; export const createS3BlobStore = createS3Client;", loader: "js" })); } };
const r = await esbuild.build({ ...productionBuildOptions("functions/plain-routes.ts", "/tmp/pr/index.mjs"), plugins: [plugin] });
const { statSync } = await import("node:fs"); console.log(statSync("/tmp/pr/index.mjs").size - 512000, "bytes over");
