/**
 * Lambda: the table's stream, filtered to the deletions DynamoDB's TTL made of messages with
 * native content (and of unused folds with a provider block) -> the blobs those items named and no
 * kept message or memory still names are deleted (docs/configuration.md, "Retention"). A batch that throws is retried, then halved, and
 * what still fails ends in the stage's dead-letter queue; a retry is safe (a deleted blob is
 * skipped).
 */
import { ttlRemovedBlobs, type StreamRecord } from "../core/adapters/dynamodb/ttl-removals.js";
import { withBlobStore } from "../core/composition/blob-store.js";
import { createDeps } from "../core/composition/create-deps.js";
import { expireBlobs } from "../core/services/blob-sweep.js";

const deps = withBlobStore(createDeps(), process.env);

export const handler = async (event: { Records?: StreamRecord[] }) => {
  let deleted = 0;
  const removed = ttlRemovedBlobs(event.Records ?? []);
  for (const { key, shas } of removed) deleted += (await expireBlobs(deps, key, shas)).deleted.length;
  deps.metrics.flush();
  return { processes: removed.length, deleted };
};
