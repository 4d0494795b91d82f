/**
 * Retention of archived originals (docs/configuration.md, "Retention"): when the originals a fold
 * archived stop being kept, and which messages a read must treat as gone. Pure; the store writes
 * the expiry in the archive's own write, and the services read the time from their clock.
 */
import type { Memory, Message } from "./model.js";

const SECONDS_PER_DAY = 86_400;

/**
 * Epoch seconds at which the originals archived into `memory` expire: its commit time plus the
 * `retentionDays` recorded on it when it committed; undefined when they are kept forever. Every
 * write that archives into the memory (the commit, each roll-forward step) derives the same value.
 */
export function originalsExpiry(memory: Pick<Memory, "createdAt" | "metadata">): number | undefined {
  const days = memory.metadata.retentionDays;
  if (days === undefined) return undefined;
  return Math.floor(Date.parse(memory.createdAt) / 1000) + days * SECONDS_PER_DAY;
}

/** The wire form of an expiry (ISO-8601 UTC) and back to DynamoDB's TTL unit, epoch seconds. */
export const expiryToIso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();
export const expiryToEpoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/**
 * Whether a message is gone for every read at `now`: DynamoDB removes an expired item only some
 * time after its expiry (up to days), so what is still stored past it must not be answered.
 */
export const isExpired = (m: Pick<Message, "expiresAt">, now: Date, marginMs = 0): boolean =>
  m.expiresAt !== undefined && Date.parse(m.expiresAt) <= now.getTime() + marginMs;

/** The messages still kept at `now`, in their order. */
export const keptAt = <M extends Pick<Message, "expiresAt">>(messages: readonly M[], now: Date): M[] =>
  messages.filter((m) => !isExpired(m, now));

/**
 * Of `refs` (a memory's sourceRefs), those no longer kept at `now` plus `marginMs`: expired but
 * still stored, or already removed (absent from `found`). In `refs` order.
 */
export function expiredRefs(refs: readonly string[], found: readonly Message[], now: Date, marginMs = 0): string[] {
  const kept = new Set(found.filter((m) => !isExpired(m, now, marginMs)).map((m) => m.id));
  return refs.filter((id) => !kept.has(id));
}
