/** Idempotency keys allow 1-128 of `A-Z a-z 0-9 . _ : @ -`, starting with a letter or digit (docs/configuration.md, "Limits"). */
export function idempotencyKey(raw: string): string {
  return raw.replace(/[^A-Za-z0-9._:@-]/g, "_").replace(/^[^A-Za-z0-9]/, "k").slice(0, 128);
}
