/**
 * How native content is kept (docs/configuration.md, "Blob storage"): small content
 * inline on the message, each string part past a size as a content-addressed blob, and content
 * that is still too large inline as one blob. A blob holds the JSON text of its value, so any
 * string (lone surrogates included) comes back exactly. Pure: the caller puts and gets the blobs.
 */
import { createHash } from "node:crypto";
import { isObject, type Json, type NativeContent, type NativeFormat } from "./formats.js";

/** A string part past this many UTF-8 bytes is kept as a blob. */
export const NATIVE_INLINE_PART_BYTES = 8 * 1024;
/** Native content still larger than this inline (after its large parts left) is one blob. */
export const NATIVE_INLINE_MAX_BYTES = 64 * 1024;
/** Deepest nesting of arrays and objects native content may have. */
export const NATIVE_MAX_DEPTH = 64;
/** Most blobs one message may hold. */
export const NATIVE_MAX_BLOBS = 512;

/** Where a blob's value goes back: a path into `content` (empty: the whole content). */
export interface BlobRef {
  path: Array<string | number>;
  sha256: string;
  bytes: number;
}

/** Native content as stored on the message: large parts cut out (left as ""), and where they are. */
export interface StoredNative {
  format: NativeFormat;
  content: Json[];
  blobs?: BlobRef[];
  /** SHA-256 of the content's JSON as received: what a read must give back (the invariants check it). */
  hash: string;
}

export interface BlobPart {
  sha256: string;
  bytes: Uint8Array;
}

const encoder = new TextEncoder();
export const sha256Hex = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

function blobOf(value: Json): BlobPart {
  const bytes = encoder.encode(JSON.stringify(value));
  return { sha256: sha256Hex(bytes), bytes };
}

/** The deepest nesting of `value`, counted without recursion (a hostile body cannot overflow it). */
export function jsonDepth(value: unknown, stopAt = Infinity): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > stopAt) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return deepest;
}

export interface SplitNative {
  stored: StoredNative;
  parts: BlobPart[];
}

/**
 * Splits `native` into what the message item keeps and the blobs to put first. The content must
 * be within {@link NATIVE_MAX_DEPTH} (checked on input). Linear in its size.
 *
 * @example splitNative({ format: "anthropic", content: [{ type: "image", source: { data: big } }] })
 * // stored.content[0].source.data === "", stored.blobs[0].path === [0, "source", "data"]
 */
export function splitNative(
  native: NativeContent,
  limits: { partBytes?: number; inlineMax?: number } = {},
): SplitNative {
  const partBytes = limits.partBytes ?? NATIVE_INLINE_PART_BYTES;
  const inlineMax = limits.inlineMax ?? NATIVE_INLINE_MAX_BYTES;
  const content = native.content as Json[];
  const whole = JSON.stringify(content);
  const hash = sha256Hex(whole);

  const holes = new WeakMap<object, Set<string>>();
  const blobs: BlobRef[] = [];
  const parts = new Map<string, BlobPart>();
  const stack: Array<[Json, Array<string | number>]> = [[content, []]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    const entries: Array<[string | number, Json]> = Array.isArray(v) ? v.map((c, i) => [i, c]) : Object.entries(v);
    for (const [key, child] of entries) {
      if (typeof child === "string") {
        // A string of n UTF-16 units is at most 3n UTF-8 bytes: most are known small without encoding.
        if (child.length * 3 <= partBytes || encoder.encode(child).byteLength <= partBytes) continue;
        const part = blobOf(child);
        parts.set(part.sha256, part);
        blobs.push({ path: [...path, key], sha256: part.sha256, bytes: part.bytes.byteLength });
        let set = holes.get(v);
        if (!set) holes.set(v, (set = new Set()));
        set.add(String(key));
      } else if (typeof child === "object" && child !== null) stack.push([child, [...path, key]]);
    }
  }
  // Holes are found newest-path-first from the stack; keep them in document order for reading.
  blobs.reverse();
  const inline: Json[] = blobs.length === 0 ? content : JSON.parse(JSON.stringify(content, function (this: object, key, value) {
    return holes.get(this)?.has(key) ? "" : value;
  }));
  const inlineText = JSON.stringify(inline);
  if (inlineText.length * 3 > inlineMax && encoder.encode(inlineText).byteLength > inlineMax) {
    const part = blobOf(content);
    return {
      stored: { format: native.format, content: [], blobs: [{ path: [], sha256: part.sha256, bytes: part.bytes.byteLength }], hash },
      parts: [part],
    };
  }
  return {
    stored: { format: native.format, content: inline, ...(blobs.length > 0 ? { blobs } : {}), hash },
    parts: [...parts.values()],
  };
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Puts the blobs back: `fetched` maps each blob's sha to its bytes. A missing blob is an error
 * (the caller fetched them all first).
 */
export function joinNative(stored: StoredNative, fetched: ReadonlyMap<string, Uint8Array>): NativeContent {
  if (!stored.blobs?.length) return { format: stored.format, content: stored.content };
  const value = (ref: BlobRef): Json => {
    const bytes = fetched.get(ref.sha256);
    if (!bytes) throw new Error(`blob ${ref.sha256} of native content is missing`);
    return JSON.parse(decoder.decode(bytes)) as Json;
  };
  const first = stored.blobs[0]!;
  if (first.path.length === 0) return { format: stored.format, content: value(first) as Json[] };
  const content = structuredClone(stored.content);
  for (const ref of stored.blobs) {
    let at: Json = content;
    for (const key of ref.path.slice(0, -1)) at = (at as Record<string, Json>)[key as string]!;
    const last = ref.path[ref.path.length - 1]!;
    // Defined, not assigned: a key such as `__proto__` is the caller's data, never a prototype.
    if (Array.isArray(at) || isObject(at)) Object.defineProperty(at, last, { value: value(ref), writable: true, enumerable: true, configurable: true });
  }
  return { format: stored.format, content };
}

/** The content's hash as stored: what {@link StoredNative.hash} is compared with. */
export const nativeHash = (native: NativeContent) => sha256Hex(JSON.stringify(native.content));
