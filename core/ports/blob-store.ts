/**
 * The blob store port: immutable byte objects of a process, addressed by their SHA-256, where the
 * large parts of native message content live (docs/configuration.md, "Blob storage"). Adapters in
 * core/adapters/blobs (S3, a local folder, memory).
 */

export interface BlobScope {
  tenantId: string;
  processId: string;
}

export interface BlobStore {
  /** Stores `bytes` under the process at its SHA-256 (hex, lowercase). Idempotent: the same sha twice is one object. */
  put(scope: BlobScope, sha256: string, bytes: Uint8Array): Promise<void>;
  /** Stores `bytes` unless a blob is stored under that sha already; true when it stored them. */
  putIfMissing(scope: BlobScope, sha256: string, bytes: Uint8Array): Promise<boolean>;
  /** True when a blob is stored under that sha (no bytes read). */
  has(scope: BlobScope, sha256: string): Promise<boolean>;
  /** The bytes stored under that sha, or null when there is none. */
  get(scope: BlobScope, sha256: string): Promise<Uint8Array | null>;
  /** Deletes every blob of the process; returns how many. Safe to repeat. */
  deleteProcess(scope: BlobScope): Promise<number>;
  /** Deletes every blob of the tenant; returns how many. Safe to repeat. */
  deleteTenant(tenantId: string): Promise<number>;
  /** The shas stored under the process (for sweeps and tests). */
  list(scope: BlobScope): Promise<string[]>;
  /**
   * Deletes one blob of the process; true when there was one. Optional: only the sweep of blobs
   * no live message names uses it (`npm run ops -- sweep-blobs`), and refuses to run without it.
   */
  delete?(scope: BlobScope, sha256: string): Promise<boolean>;
}
