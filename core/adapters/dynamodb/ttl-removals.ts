/**
 * The records of the table's stream that matter to the blob store: messages DynamoDB's TTL
 * removed (docs/configuration.md, "Retention"), and queued or prepared folds it removed unused,
 * whose provider block may be a blob. A TTL deletion is a `REMOVE` whose
 * `userIdentity` is `{ type: "Service", principalId: "dynamodb.amazonaws.com" }` (the DynamoDB
 * Streams API reference, "Record" and "Identity"); its `OldImage` is the item as it was, with the
 * native content's blob list in the `native` attribute's JSON text (a fold's block: its stored form).
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import type { StoredNative } from "../../domain/native/blob-parts.js";
import type { ProcessKey } from "../../ports/store.js";
import { MEMORY_PREFIX, MESSAGE_PREFIX } from "./keys.js";

/** One record of a DynamoDB stream event, as Lambda delivers it (only the fields read here). */
export interface StreamRecord {
  eventName?: string;
  userIdentity?: { type?: string; principalId?: string };
  dynamodb?: { OldImage?: Record<string, AttributeValue> };
}

/** The blob shas the removed originals of one process named. */
export interface RemovedBlobs {
  key: ProcessKey;
  shas: string[];
}

const PROCESS_PK = /^T#([^#]+)#P#([^#]+)$/;

/** True for the deletions TTL made, as the stream marks them. */
export const isTtlRemoval = (r: StreamRecord) =>
  r.eventName === "REMOVE" && r.userIdentity?.type === "Service" && r.userIdentity.principalId === "dynamodb.amazonaws.com";

/**
 * The blob shas of the messages and folds TTL removed, per process; every other record (a deletion
 * the service made, a message or fold without blobs) is left out.
 *
 * @example ttlRemovedBlobs([{ eventName: "REMOVE", userIdentity: { type: "Service", principalId: "dynamodb.amazonaws.com" }, dynamodb: { OldImage: { pk: { S: "T#a#P#p" }, sk: { S: "M#msg_1" }, native: { S: '{"blobs":[{"sha256":"9f…"}]}' } } } }])
 * // [{ key: { tenantId: "a", processId: "p" }, shas: ["9f…"] }]
 */
export function ttlRemovedBlobs(records: readonly StreamRecord[]): RemovedBlobs[] {
  const byProcess = new Map<string, RemovedBlobs>();
  for (const r of records) {
    if (!isTtlRemoval(r)) continue;
    const image = r.dynamodb?.OldImage;
    const pk = image?.pk?.S;
    const native = image?.native?.S;
    const sk = image?.sk?.S;
    if (!pk || !native || !(sk?.startsWith(MESSAGE_PREFIX) || sk?.startsWith(MEMORY_PREFIX))) continue;
    const match = PROCESS_PK.exec(pk);
    if (!match) continue;
    const blobs = (JSON.parse(native) as Partial<StoredNative>).blobs ?? [];
    if (blobs.length === 0) continue;
    const entry = byProcess.get(pk) ?? { key: { tenantId: match[1]!, processId: match[2]! }, shas: [] };
    for (const ref of blobs) entry.shas.push(ref.sha256);
    byProcess.set(pk, entry);
  }
  return [...byProcess.values()];
}
