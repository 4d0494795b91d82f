/**
 * What a turn's or a manual compaction's answer says of the compaction it ran (docs/api.md, "HTTP API
 * (JSON; times are ISO-8601 UTC; ids are opaque strings)", its `CompactionResult`). Apart from ./model.ts: only the routes that summarize answer it, so the
 * plain routes' bundle does without its schema (docs/benchmarks.md, "Cold start").
 */
import * as z from "./zod.js";
import { CompactionModeName } from "./model.js";

export const CompactionResult = z.object({
  mode: CompactionModeName,
  compacted: z.boolean(),
  memoryId: z.optional(z.string()),
  compactedMessages: z.int().check(z.nonnegative()),
  tokensBefore: z.int().check(z.nonnegative()),
  tokensAfter: z.int().check(z.nonnegative()),
  reason: z.optional(z.string()),
  /**
   * A turn whose prompt would exceed the emergency threshold while its fold is queued: how many of
   * the oldest foldable messages the answer left out (the stored history keeps them, and recall
   * reaches them), their tokens in the caller's unit, and the ids of the oldest and the newest of
   * them. The left-out messages need not be contiguous: pinned messages and tool groups that must
   * stay may sit between them, kept in the answer.
   */
  trimmed: z.optional(
    z.object({
      messages: z.int().check(z.nonnegative()),
      tokens: z.int().check(z.nonnegative()),
      fromMessageId: z.optional(z.string()),
      toMessageId: z.optional(z.string()),
    }),
  ),
  /** TOOL results this call cleared from the replay before deciding on a fold (absent: none). */
  clearedMessages: z.optional(z.int().check(z.nonnegative())),
  /**
   * The fold this call committed: who wrote it (`by`, the memory's `metadata.provider`), whether
   * a provider wrote it (`kind`) and its block came with it, what its summarizer calls cost in
   * tokens and took in ms (docs/summarizers.md, "Provider folds").
   */
  fold: z.optional(
    z.object({
      by: z.string(),
      kind: z.enum(["service", "provider"]),
      block: z.boolean(),
      inputTokens: z.int().check(z.nonnegative()),
      outputTokens: z.int().check(z.nonnegative()),
      ms: z.int().check(z.nonnegative()),
    }),
  ),
});
export type CompactionResult = z.infer<typeof CompactionResult>;
