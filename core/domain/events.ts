/**
 * The event catalogue: every event the service publishes or handles, with its source, its
 * detail-type and the zod schema of its detail (docs/api.md, "Events"). Publishers build events
 * with {@link domainEvent}, handlers parse the detail with the entry's schema at the boundary, the
 * local bus subscribes by entry, and the stacks derive their rules and `events:source` conditions
 * from it. A unit test checks docs/api.md against it.
 */
import * as z from "./zod.js";
import { Id, TopicLabel } from "./fields.js";
import { FoldJob, FoldTarget } from "./model.js";

export const EVENT_SOURCES = {
  plan: "vancetope.plan",
  inbox: "vancetope.inbox",
  memory: "vancetope.memory",
} as const;

export type EventSource = (typeof EVENT_SOURCES)[keyof typeof EVENT_SOURCES];

const ProcessRef = { tenantId: Id, processId: Id };
const FoldId = /* @__PURE__ */ z.string().check(z.minLength(1), z.maxLength(64));

/**
 * What the service's own events carry; incoming ones are checked harder (they come from outside).
 * Built by a pure call, so that a bundle that only publishes drops the schemas ({@link domainEvent}).
 */
export const EVENTS = /* @__PURE__ */ (() => ({
  /** In: an engine finished a plan; maybe one recompaction offer (docs/api.md). */
  PlanCompleted: {
    source: EVENT_SOURCES.plan,
    detailType: "PlanCompleted",
    detail: z.object({
      ...ProcessRef,
      planId: z.string().check(z.minLength(1), z.maxLength(256)),
      topicLabel: TopicLabel,
      completedAt: z.iso.datetime({ offset: true }),
    }),
  },
  /** In (and published by the answer endpoint): an inbox item was answered. */
  InboxItemAnswered: {
    source: EVENT_SOURCES.inbox,
    detailType: "InboxItemAnswered",
    detail: z.object({ tenantId: Id, itemId: Id, accepted: z.boolean() }),
  },
  /** Out: a fold was committed, and how it was produced. */
  MemoryCompacted: {
    source: EVENT_SOURCES.memory,
    detailType: "MemoryCompacted",
    detail: z.object({
      ...ProcessRef,
      memoryId: z.string(),
      mode: z.optional(FoldTarget),
      compactedMessages: z.int(),
      producedBy: z.optional(z.enum(["inline", "prepared", "worker"])),
    }),
  },
  /** Out: old tool results were replaced by placeholders. */
  ToolResultsCleared: {
    source: EVENT_SOURCES.memory,
    detailType: "ToolResultsCleared",
    detail: z.object({ ...ProcessRef, clearedMessages: z.int(), tokensFreed: z.number(), messageIds: z.array(z.string()) }),
  },
  /** Out: a finished topic may be folded (an inbox item to answer). */
  RecompactionOffered: {
    source: EVENT_SOURCES.memory,
    detailType: "RecompactionOffered",
    detail: z.object({ ...ProcessRef, itemId: z.string(), topicLabel: z.string() }),
  },
  /** Out: a compaction was undone. */
  MemoryReverted: {
    source: EVENT_SOURCES.memory,
    detailType: "MemoryReverted",
    detail: z.object({ ...ProcessRef, memoryId: z.string(), restoredMessages: z.int(), activeSummaryId: z.nullable(z.string()) }),
  },
  /** Internal: the service's request to its compaction worker (docs/compaction.md, "The worker"). */
  CompactionRequested: {
    source: EVENT_SOURCES.memory,
    detailType: "CompactionRequested",
    detail: z.object({
      ...ProcessRef,
      foldId: FoldId,
      mode: z.optional(FoldTarget),
      job: z.optional(z.enum([...FoldJob.options, "commit"])),
      /** A `commit` job: the prompt (caller's units) of the turn that found the fold due. */
      promptTokens: z.optional(z.number()),
    }),
  },
  /** Internal: the service's request to erase a deleted process in the background (docs/api.md, "Deleting a process"). */
  ProcessEraseRequested: {
    source: EVENT_SOURCES.memory,
    detailType: "ProcessEraseRequested",
    detail: z.object({ ...ProcessRef }),
  },
} as const))();

export type EventName = keyof typeof EVENTS;
export type EventDetail<N extends EventName> = z.infer<(typeof EVENTS)[N]["detail"]>;

/** An event of the catalogue, as the EventPublisher port takes it. */
export interface CatalogueEvent<N extends EventName = EventName> {
  source: (typeof EVENTS)[N]["source"];
  detailType: N;
  detail: EventDetail<N> & Record<string, unknown>;
}

/**
 * Builds an event of the catalogue; the detail is type-checked against its schema.
 *
 * @example
 * await deps.events.publish(domainEvent("MemoryReverted", { tenantId, processId, memoryId, restoredMessages: 3, activeSummaryId: null }));
 */
export function domainEvent<N extends EventName>(name: N, detail: EventDetail<N>): CatalogueEvent<N> {
  return { source: SOURCES[name], detailType: name, detail: detail as CatalogueEvent<N>["detail"] };
}

/**
 * Each event's source apart from its schema (the type makes it match {@link EVENTS}): building an
 * event needs none of the zod schemas, so a bundle that only publishes carries none of them.
 */
const SOURCES: { readonly [N in EventName]: (typeof EVENTS)[N]["source"] } = {
  PlanCompleted: EVENT_SOURCES.plan,
  InboxItemAnswered: EVENT_SOURCES.inbox,
  MemoryCompacted: EVENT_SOURCES.memory,
  ToolResultsCleared: EVENT_SOURCES.memory,
  RecompactionOffered: EVENT_SOURCES.memory,
  MemoryReverted: EVENT_SOURCES.memory,
  CompactionRequested: EVENT_SOURCES.memory,
  ProcessEraseRequested: EVENT_SOURCES.memory,
};

/**
 * Parses an incoming event's detail with its catalogue schema: the detail, or why it does not
 * match (the messages of the failing fields).
 */
export function parseDetail<N extends EventName>(
  name: N,
  raw: unknown,
): { ok: true; detail: EventDetail<N> } | { ok: false; issues: string[] } {
  const parsed = z.safeParse(EVENTS[name].detail, raw);
  return parsed.success
    ? { ok: true, detail: parsed.data as EventDetail<N> }
    : { ok: false, issues: parsed.error.issues.map((i) => i.message) };
}
