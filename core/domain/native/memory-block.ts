/**
 * A provider's block as a memory keeps it (docs/summarizers.md, "Where the block is kept"): inline
 * on the memory's item up to NATIVE_INLINE_MAX_BYTES, past that as one blob of the process that
 * the memory names (`nativeBlob`), up to NATIVE_BLOCK_MAX_BYTES; past that not at all (the
 * readable summary alone). The blob holds the content's JSON text, as a message's whole-content
 * blob does, so it comes back exactly. Pure: the services put and get the blob.
 */
import * as z from "../zod.js";
import { NATIVE_INLINE_MAX_BYTES, joinNative, sha256Hex, type BlobPart, type StoredNative } from "./blob-parts.js";
import { NativeFormat, type NativeContent } from "./formats.js";

/** The largest block a memory keeps, in bytes of its JSON (`{ format, content }`). */
export const NATIVE_BLOCK_MAX_BYTES = 4 * 1024 * 1024;

/** Where a block past the inline size is: the blob of its content's JSON text, and that text's SHA-256 and size. */
export const NativeBlob = z.strictObject({
  format: NativeFormat,
  sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  bytes: z.int().check(z.positive()),
});
export type NativeBlob = z.infer<typeof NativeBlob>;

const encoder = new TextEncoder();

/** The size the limits count: bytes of the block's JSON. */
export const blockBytes = (native: NativeContent) => encoder.encode(JSON.stringify(native)).byteLength;

/** The format of the memory's block, wherever it is kept; undefined when it keeps none. */
export const blockFormat = (m: { native?: NativeContent | undefined; nativeBlob?: NativeBlob | undefined }) => m.native?.format ?? m.nativeBlob?.format;

/**
 * How a memory keeps `native`: inline when it is within NATIVE_INLINE_MAX_BYTES, else as the blob
 * to put before the memory is written.
 *
 * @example splitBlock(block) // { inline: block } or { blob: { format, sha256, bytes }, part }
 */
export function splitBlock(native: NativeContent): { inline: NativeContent } | { blob: NativeBlob; part: BlobPart } {
  if (blockBytes(native) <= NATIVE_INLINE_MAX_BYTES) return { inline: native };
  const bytes = encoder.encode(JSON.stringify(native.content));
  const sha256 = sha256Hex(bytes);
  return { blob: { format: native.format, sha256, bytes: bytes.byteLength }, part: { sha256, bytes } };
}

/** The blob's reference as native content is stored (the whole content one blob): what the memory's item holds. */
export const storedBlock = (blob: NativeBlob): StoredNative => ({
  format: blob.format,
  content: [],
  blobs: [{ path: [], sha256: blob.sha256, bytes: blob.bytes }],
  hash: blob.sha256,
});

/** The reference back from what the item holds: the stored form with its one whole-content blob. */
export function blobOfStored(stored: StoredNative): NativeBlob | undefined {
  const ref = stored.blobs?.[0];
  return ref && ref.path.length === 0 ? { format: stored.format, sha256: ref.sha256, bytes: ref.bytes } : undefined;
}

/** The block put back from its blob's bytes (which the caller read). */
export const joinBlock = (blob: NativeBlob, bytes: Uint8Array): NativeContent => joinNative(storedBlock(blob), new Map([[blob.sha256, bytes]]));

/**
 * Whether a memory's block blob is kept: a summary's, a reverted one's (kept for audit), a queued
 * or prepared fold's. A discarded or failed fold's is swept, since no replay reads it
 * (docs/summarizers.md, "Where the block is kept").
 */
export const keepsBlockBlob = (m: { status: string }) => m.status !== "DISCARDED" && m.status !== "FAILED";
