/**
 * The object layout every blob adapter shares: `blobs/<tenantId>/<processId>/<sha256>`. Ids and shas
 * are checked here, so no key (or file path) can leave its tenant's prefix.
 */
import { Id } from "../../domain/fields.js";
import type { BlobScope } from "../../ports/blob-store.js";

export const BLOB_ROOT = "blobs";

const SHA256_HEX = /^[0-9a-f]{64}$/;

export const isSha256 = (value: string) => SHA256_HEX.test(value);

function checkId(name: string, value: string): string {
  if (!Id.safeParse(value).success) throw new Error(`blob store: ${name} '${value}' is not a valid id`);
  return value;
}

export function checkSha256(sha256: string): string {
  if (!isSha256(sha256)) throw new Error(`blob store: '${sha256}' is not a lowercase hex SHA-256`);
  return sha256;
}

/** `blobs/<tenantId>/`: every blob of the tenant. */
export const tenantPrefix = (tenantId: string) => `${BLOB_ROOT}/${checkId("tenantId", tenantId)}/`;

/** `blobs/<tenantId>/<processId>/`: every blob of the process. */
export const processPrefix = (scope: BlobScope) => `${tenantPrefix(scope.tenantId)}${checkId("processId", scope.processId)}/`;

/** `blobs/<tenantId>/<processId>/<sha256>`. */
export const blobKey = (scope: BlobScope, sha256: string) => `${processPrefix(scope)}${checkSha256(sha256)}`;
