/**
 * `npm run data:locomo`: downloads the public LoCoMo data set (locomo10.json, from its own
 * repository snap-research/locomo; CC BY-NC 4.0) and splits it into one file per conversation in
 * data/locomo/ (git-ignored; docs/development.md, "LoCoMo data"), where the benchmarks and the demo look for it.
 *
 *   LOCOMO_URL   where to download from (default: the data set's GitHub raw URL)
 *   LOCOMO_DIR   where to write (default: data/locomo/ in the repository)
 *
 * Nothing is written unless the whole download parses; tests never need it.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { LOCOMO_URL, locomoDir, splitLocomo10 } from "../bench/support/locomo.js";

const TIMEOUT_MS = 120_000;

async function main(): Promise<void> {
  const url = process.env.LOCOMO_URL?.trim() || LOCOMO_URL;
  const dir = locomoDir();
  console.log(`Downloading ${url}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) throw new Error(`download failed: HTTP ${response.status} ${response.statusText} from ${url}`);
  const body = await response.text();
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (e) {
    throw new Error(`${url} is not JSON (${(e as Error).message})`);
  }
  const files = splitLocomo10(data);
  mkdirSync(dir, { recursive: true });
  for (const { file, content } of files) {
    // Write next to the target, then rename: a reader never sees half a file.
    const target = path.join(dir, file);
    writeFileSync(`${target}.tmp`, `${JSON.stringify(content)}\n`);
    renameSync(`${target}.tmp`, target);
  }
  console.log(`Wrote ${files.length} conversations (${files.map((f) => f.file.replace(/\.json$/, "")).join(", ")}) to ${dir}`);
  console.log("LoCoMo: Maharana et al., ACL 2024, https://github.com/snap-research/locomo, licensed CC BY-NC 4.0 (non-commercial use).");
}

main().catch((e: unknown) => {
  console.error(`data:locomo: ${(e as Error).message}`);
  process.exit(1);
});
