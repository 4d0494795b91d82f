/** Time and id sources, injected so tests and the chaos harness can control them. */
export interface Clock {
  now(): Date;
}

export interface Ids {
  /** A sortable id for a message created at `at` (ULID-based, monotonic within a container). */
  message(at: Date): string;
  memory(at: Date): string;
  inbox(at: Date): string;
  /** An opaque random token (lease owners). */
  token(): string;
}
