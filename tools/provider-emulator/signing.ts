/**
 * The emulator's stand-in for a provider's private keys: HMAC signatures and AES-GCM sealed blobs
 * under one per-server secret, so only the emulator that issued a signature can verify it.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export interface Signer {
  /** Base64url HMAC-SHA256 of `message`. */
  mac(message: string): string;
  /** True when `tag` is `mac(message)`. */
  verifyMac(message: string, tag: string): boolean;
  /** AES-256-GCM: an opaque base64 blob only `open` of the same signer can read. */
  seal(plaintext: string): string;
  /** The plaintext of a blob `seal` made, or null when it was altered, truncated or made elsewhere. */
  open(blob: string): string | null;
}

/**
 * A signer over `secret` (default: 32 random bytes, so two emulators never accept each other's
 * signatures, as two provider accounts would not).
 *
 * @example
 * const signer = createSigner();
 * signer.verifyMac("a", signer.mac("a")); // true
 */
export function createSigner(secret: Uint8Array = randomBytes(32)): Signer {
  const key = Buffer.from(secret);
  const macKey = createHmac("sha256", key).update("mac").digest();
  const encKey = createHmac("sha256", key).update("enc").digest();
  const mac = (message: string) => createHmac("sha256", macKey).update(message, "utf8").digest("base64url");
  return {
    mac,
    verifyMac(message, tag) {
      const expected = Buffer.from(mac(message));
      const given = Buffer.from(String(tag));
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", encKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
    },
    open(blob) {
      try {
        const bytes = Buffer.from(String(blob), "base64");
        if (bytes.length < 28) return null;
        const decipher = createDecipheriv("aes-256-gcm", encKey, bytes.subarray(0, 12));
        decipher.setAuthTag(bytes.subarray(12, 28));
        return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
      } catch {
        return null;
      }
    },
  };
}
