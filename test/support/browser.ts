/**
 * Headless Chromium for the inspector tests (Debian's `chromium` package driven by playwright-core;
 * never a downloaded browser), and a bulk seeder for very long histories.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import type { Role } from "../../core/domain/model.js";
import type { LocalService } from "../../local/server.js";
import { draftMessages, writeMessages } from "./seed.js";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const ARTIFACTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test-artifacts");

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: the inspector's browser tests need Debian's chromium ` +
        `package (apt-get update && apt-get install -y chromium; .ci/run installs it when missing).`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-quic",
      "--no-first-run",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return path.join(ARTIFACTS_DIR, name);
}

/**
 * Writes `count` messages straight into the process's partition with BatchWriteItem, through the
 * adapter's own item mapping: posting 10,000 messages one by one would dominate the test's time.
 * The process must exist (create it through the API first).
 */
export async function seedBulkHistory(
  service: Pick<LocalService, "dynamoEndpoint" | "tableName">,
  key: { tenantId: string; processId: string },
  count: number,
  make: (i: number) => { role: Role; content: string; tags?: string[] },
): Promise<void> {
  const client = createDocumentClient({ endpoint: service.dynamoEndpoint });
  const start = Date.now() - count;
  const messages = draftMessages(key, count, make, (i) => new Date(start + i));
  await writeMessages(client, service.tableName, key, messages);
  client.destroy();
}
