/**
 * Headless Chromium for the inspector tests (Debian's `chromium` package driven by playwright-core;
 * never a downloaded browser), and a bulk seeder for very long histories.
 */
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { createUlidIds } from "../../core/adapters/ids.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { messageToItem } from "../../core/adapters/dynamodb/store.js";
import type { Message, Role } from "../../core/domain/model.js";
import { messageTokens } from "../../core/domain/tokens.js";
import type { LocalService } from "../../local/server.js";

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
  const ids = createUlidIds();
  const start = Date.now() - count;
  const items = Array.from({ length: count }, (_, i) => {
    const at = new Date(start + i);
    const { role, content, tags = [] } = make(i);
    const draft = { id: ids.message(at), processId: key.processId, role, content, tags, createdAt: at.toISOString(), archivedInMemoryId: null };
    const message: Message = { ...draft, tokens: messageTokens(draft) };
    return messageToItem(key, message);
  });
  const batches: (typeof items)[] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  const worker = async () => {
    for (let batch = batches.shift(); batch; batch = batches.shift()) {
      let request: Record<string, unknown[]> | undefined = { [service.tableName]: batch.map((Item) => ({ PutRequest: { Item } })) };
      while (request && Object.keys(request).length) {
        const out = await client.send(new BatchWriteCommand({ RequestItems: request as never }));
        request = out.UnprocessedItems as typeof request;
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  client.destroy();
}
