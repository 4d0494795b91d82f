/**
 * `npm run keys -- <create|revoke|list|erase-tenant>`: manages a stage's API keys in its table (TABLE_NAME;
 * DYNAMODB_ENDPOINT for DynamoDB Local). A new key is printed once; only its SHA-256 is stored.
 *
 * @example
 * TABLE_NAME=team-a-vancetope-memory-table npm run keys -- create --tenant team-a --label "engine prod"
 * npm run keys -- revoke --key vtm_…        (or --hash <sha256 hex>)
 * npm run keys -- list --tenant team-a [--json]
 * npm run keys -- erase-tenant --tenant team-a --confirm team-a
 */
import { createApiKeyStore, hashApiKey, isApiKeyHash, type ApiKeyStore } from "../core/adapters/dynamodb/api-keys.js";
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import { createBlobStore } from "../core/composition/local-blob-store.js";
import type { BlobStore } from "../core/ports/blob-store.js";
import type { ErasureStore, ProcessStore } from "../core/ports/store.js";
import { eraseTenant } from "../core/services/tenant-erasure.js";
import { runAsScript, runCommandLine, TABLE_ENVIRONMENT, tableFrom, type TableCliIo, tenantArg, UsageError } from "./cli.js";

export const USAGE = `usage:
  keys create --tenant <tenantId> [--label <text>] [--json]   prints a new key once
  keys revoke --key <key> | --hash <sha256>                    stamps revokedAt (the item stays)
  keys list --tenant <tenantId> [--json]                       hashes, labels, dates; never keys
  keys erase-tenant --tenant <tenantId> --confirm <tenantId>   revokes every key of the tenant, then
                                                               erases its processes, settings, usage
                                                               and blobs (BLOB_BUCKET, S3_ENDPOINT or BLOB_DIR);
                                                               exits 1 if more than tombstones is left
${TABLE_ENVIRONMENT}`;

export interface CliIo extends TableCliIo {
  /** Injected by tests; built from env otherwise. */
  store?: ApiKeyStore;
  /** The service's store over the same table (erase-tenant); built from env otherwise. */
  data?: ErasureStore & ProcessStore;
  /** The stage's blob store (erase-tenant); built from env otherwise (BLOB_BUCKET or BLOB_DIR), none without either. */
  blobs?: BlobStore;
}

function storeFrom(env: CliIo["env"]): ApiKeyStore {
  return createApiKeyStore(tableFrom(env));
}

/** Runs one command; resolves to the process exit code (0 ok, 1 refused, 2 usage). */
export async function runKeysCli(argv: string[], io: CliIo): Promise<number> {
  const options = {
    tenant: { type: "string" },
    label: { type: "string" },
    key: { type: "string" },
    hash: { type: "string" },
    confirm: { type: "string" },
    json: { type: "boolean", default: false },
  } as const;
  return runCommandLine(argv, USAGE, io, options, async (command, values) => {

    if (command === "create") {
      const tenantId = tenantArg(values.tenant);
      const label = values.label ?? "";
      if (label.length > 200) throw new UsageError("--label is longer than 200 characters");
      const store = io.store ?? storeFrom(io.env);
      const { key, record } = await store.create({ tenantId, label });
      if (values.json) io.out(JSON.stringify({ key, ...record }));
      else {
        io.out(key);
        io.err(`created key ${record.hash.slice(0, 12)}… for tenant '${tenantId}'${label ? ` (${label})` : ""}`);
        io.err("store it now: it is shown only this once (the table keeps only its SHA-256)");
      }
      return 0;
    }

    if (command === "revoke") {
      if (Boolean(values.key) === Boolean(values.hash)) throw new UsageError("revoke needs exactly one of --key or --hash");
      const hash = values.key ? hashApiKey(values.key) : values.hash!.toLowerCase();
      if (!isApiKeyHash(hash)) throw new UsageError("--hash must be 64 hex characters");
      const store = io.store ?? storeFrom(io.env);
      const out = await store.revoke(hash);
      if (!out.ok) {
        io.err(out.reason === "not_found" ? `no key with hash ${hash}` : `key ${hash.slice(0, 12)}… was already revoked`);
        return 1;
      }
      if (values.json) io.out(JSON.stringify(out.record));
      else io.out(`revoked ${hash} (tenant '${out.record.tenantId}') at ${out.record.revokedAt}`);
      return 0;
    }

    if (command === "list") {
      const tenantId = tenantArg(values.tenant);
      const store = io.store ?? storeFrom(io.env);
      const records = await store.list(tenantId);
      if (values.json) io.out(JSON.stringify(records));
      else if (records.length === 0) io.out(`no keys for tenant '${tenantId}'`);
      else {
        for (const r of records) {
          io.out([r.hash, r.createdAt, r.revokedAt ? `revoked ${r.revokedAt}` : "active", r.label].join("  ").trimEnd());
        }
      }
      return 0;
    }

    if (command === "erase-tenant") {
      const tenantId = tenantArg(values.tenant);
      // The tenant's id twice: an erasure cannot be undone (docs/api.md, "Deleting a process").
      if (values.confirm !== tenantId) throw new UsageError("erase-tenant needs --confirm with the tenant's id again");
      const store = io.store ?? storeFrom(io.env);
      // Keys first, so that nothing new is written while the data is erased.
      let revoked = 0;
      for (const r of await store.list(tenantId)) {
        if (!r.revokedAt && (await store.revoke(r.hash)).ok) revoked++;
      }
      const data = io.data ?? createDynamoStore(tableFrom(io.env));
      const blobs = io.blobs ?? createBlobStore(io.env);
      if (!blobs) io.err("no BLOB_BUCKET or BLOB_DIR: the tenant's blobs are not deleted (docs/configuration.md, \"Blob storage\")");
      const erased = await eraseTenant(data, tenantId, new Date().toISOString(), blobs);
      const summary = { tenantId, revokedKeys: revoked, ...erased };
      if (values.json) io.out(JSON.stringify(summary));
      else io.out(`tenant '${tenantId}': ${revoked} keys revoked, ${erased.processes} processes, ${erased.items} items and ${erased.blobs} blobs erased`);
      // The final check: anything but tombstones left is a failed erasure (run it again).
      if (erased.left.length > 0) {
        io.err(`erase-tenant: ${erased.left.length} items of tenant '${tenantId}' are still stored; run the command again:`);
        for (const item of erased.left.slice(0, 20)) io.err(`  ${JSON.stringify(item)}`);
        return 1;
      }
      return 0;
    }

    throw new UsageError(`unknown command '${command}'`);
  });
}

await runAsScript(import.meta.url, runKeysCli);
