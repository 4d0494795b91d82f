/**
 * The run's S3-compatible server (s3rver, test/support/s3rver.ts) and a fresh bucket in it per test
 * file, the way test/support/dynamo.ts gives each file its own table.
 */
import { randomUUID } from "node:crypto";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { inject } from "vitest";
import { createS3Client } from "../../core/adapters/blobs/s3-blob-store.js";
import { S3RVER_CREDENTIALS } from "./s3rver.js";

export { S3RVER_CREDENTIALS };

export const s3Endpoint = (): string => inject("s3Endpoint");

/** A client of the run's s3rver: path-style addressing, its fake credentials. */
export const localS3Client = (): S3Client =>
  createS3Client({ endpoint: s3Endpoint(), forcePathStyle: true, credentials: S3RVER_CREDENTIALS, region: "us-east-1" });

/** A new, empty bucket (`blobs-<8 hex>`: within S3's 3-63 characters) and a client for it. */
export async function freshBucket(prefix = "blobs") {
  const client = localS3Client();
  const bucket = `${prefix}-${randomUUID().slice(0, 8)}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return { client, bucket, endpoint: s3Endpoint() };
}
