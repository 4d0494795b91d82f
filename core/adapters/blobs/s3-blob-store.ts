/**
 * The blob store on S3 (docs/configuration.md, "Blob storage"): one object per blob under
 * `blobs/<tenantId>/<processId>/<sha256>` in the stage's bucket (BLOB_BUCKET). Blobs are immutable and
 * named by their content, so a put is a plain PutObject: writing the same sha again writes the same bytes.
 */
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  HeadObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import type { BlobScope, BlobStore } from "../../ports/blob-store.js";
import { blobKey, isSha256, processPrefix, tenantPrefix } from "./keys.js";

/** DeleteObjects takes at most 1000 keys, and ListObjectsV2 answers at most 1000. */
export const S3_DELETE_BATCH = 1000;

export interface S3ClientOptions {
  region?: string;
  /** An S3-compatible server's URL (S3_ENDPOINT), e.g. MinIO or s3rver; unset in AWS. */
  endpoint?: string;
  /** Bucket in the path, not the host name; what local S3-compatible servers need. Default: set with `endpoint`. */
  forcePathStyle?: boolean;
  credentials?: S3ClientConfig["credentials"];
  /** Wraps the client (tracing), as the DynamoDB client is wrapped. */
  capture?: <C extends object>(client: C) => C;
}

/** The S3 client of the blob store; an endpoint means a local S3-compatible server, addressed by path. */
export function createS3Client(options: S3ClientOptions = {}): S3Client {
  const client = new S3Client({
    region: options.region ?? process.env.AWS_REGION ?? "us-east-1",
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    // Checksums only where S3 requires one (DeleteObjects): the bytes are already named by their
    // SHA-256, and S3-compatible servers do not all speak the newer checksum headers.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return options.capture ? options.capture(client) : client;
}

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** Keys listed and deleted per request (at most 1000, the default); tests use smaller batches. */
  batchSize?: number;
}

const isMissing = (e: unknown) => {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err?.name === "NoSuchKey" || err?.name === "NotFound" || err?.$metadata?.httpStatusCode === 404;
};

/**
 * @example
 * const blobs = createS3BlobStore({ client: createS3Client(), bucket: process.env.BLOB_BUCKET! });
 * await blobs.put({ tenantId: "t1", processId: "p1" }, sha, bytes);
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { client, bucket } = options;
  const batchSize = options.batchSize ?? S3_DELETE_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > S3_DELETE_BATCH) {
    throw new Error(`s3 blob store: batchSize must be a whole number from 1 to ${S3_DELETE_BATCH}, got ${batchSize}`);
  }

  async function listPage(prefix: string, token?: string) {
    const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: batchSize, ContinuationToken: token }));
    return { keys: (out.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])), next: out.IsTruncated ? out.NextContinuationToken : undefined };
  }

  /** Deletes everything under `prefix`, a listed page at a time; each page's keys are gone before the next is read. */
  async function deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      // Always the first page: what was deleted has left the listing.
      const { keys } = await listPage(prefix);
      if (keys.length === 0) return deleted;
      const out = await client.send(
        new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0]!;
        throw new Error(`s3 blob store: ${failed.length} of ${keys.length} objects under ${prefix} not deleted (${first.Key}: ${first.Code} ${first.Message ?? ""})`.trim());
      }
      deleted += keys.length;
    }
  }

  async function has(scope: BlobScope, sha256: string): Promise<boolean> {
    try {
      await client.send(new HeadObjectCommand({ Bucket: bucket, Key: blobKey(scope, sha256) }));
      return true;
    } catch (e) {
      if (isMissing(e)) return false;
      throw e;
    }
  }

  return {
    async put(scope, sha256, bytes) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: blobKey(scope, sha256), Body: bytes, ContentType: "application/octet-stream", ContentLength: bytes.byteLength }),
      );
    },

    async get(scope, sha256) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: blobKey(scope, sha256) }));
        if (!out.Body) return new Uint8Array();
        return await out.Body.transformToByteArray();
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },

    deleteProcess: (scope: BlobScope) => deletePrefix(processPrefix(scope)),

    deleteTenant: (tenantId: string) => deletePrefix(tenantPrefix(tenantId)),

    has,

    async putIfMissing(scope, sha256, bytes) {
      if (await has(scope, sha256)) return false;
      await this.put(scope, sha256, bytes);
      return true;
    },

    async delete(scope, sha256) {
      // S3 answers a delete the same whether the object was there: ask first (only the sweep deletes one blob).
      if (!(await has(scope, sha256))) return false;
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: blobKey(scope, sha256) }));
      return true;
    },

    async list(scope) {
      const prefix = processPrefix(scope);
      const shas: string[] = [];
      let token: string | undefined;
      do {
        const page = await listPage(prefix, token);
        for (const key of page.keys) {
          const sha = key.slice(prefix.length);
          if (isSha256(sha)) shas.push(sha);
        }
        token = page.next;
      } while (token);
      return shas.sort();
    },
  };
}
