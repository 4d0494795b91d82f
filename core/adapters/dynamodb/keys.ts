/**
 * Pure key builders for the single-table layout (indexes and projections in table.ts).
 * Ids are validated at the API boundary to a safe alphabet, so `#` never appears inside one.
 */
import type { ProcessKey } from "../../ports/store.js";

export const ACTIVE_PREFIX = "A#";

export const processPk = (k: ProcessKey) => `T#${k.tenantId}#P#${k.processId}`;
export const META_SK = "META";
export const META_ACTIVE = `${ACTIVE_PREFIX}0`;

export const MESSAGE_PREFIX = "M#";
export const messageSk = (id: string) => `${MESSAGE_PREFIX}${id}`;
export const activeMessageKey = (id: string) => `${ACTIVE_PREFIX}M#${id}`;

export const MEMORY_PREFIX = "S#";
export const memorySk = (id: string) => `${MEMORY_PREFIX}${id}`;
export const activeMemoryKey = (id: string) => `${ACTIVE_PREFIX}S#${id}`;
/** A queued or prepared fold: read with the replay, never replayed (status tells it apart). */
export const pendingFoldKey = (id: string) => `${ACTIVE_PREFIX}P#${id}`;
/**
 * TTL attribute (epoch seconds) of queued and prepared folds (a committed fold has none) and of
 * archived originals under a retention (core/domain/retention.ts); never on anything active.
 */
export const TTL_ATTRIBUTE = "expiresAtEpoch";

export const idempotencySk = (key: string) => `IDEM#${key}`;

/** Tenant-wide listing of processes, newest first (gsi1). */
export const processesByTenant = (tenantId: string) => `T#${tenantId}#PROCS`;
/** Processes of one project (gsi2). */
export const processesByProject = (tenantId: string, projectId: string) =>
  `T#${tenantId}#PJ#${projectId}`;
export const processListSk = (createdAt: string, processId: string) => `${createdAt}#${processId}`;
/**
 * A tenant's processes that no listing shows (gsi1): imports not yet live and deletions not yet
 * finished, so that a tenant's erasure finds them (core/services/tenant-erasure.ts).
 */
export const unlistedProcesses = (tenantId: string) => `T#${tenantId}#UNLISTED`;

/** Inbox items live in their own partition so that an answer needs only the item id. */
export const inboxPk = (tenantId: string, itemId: string) => `T#${tenantId}#I#${itemId}`;
export const INBOX_SK = "INBOX";
/**
 * A pointer to one of the process's inbox items, in the process's own partition: a deletion finds
 * every offer with one strongly consistent read of the partition, where an index might lag.
 */
export const INBOX_REF_PREFIX = "INBOX#";
export const inboxRefSk = (itemId: string) => `${INBOX_REF_PREFIX}${itemId}`;
export const inboxByTenant = (tenantId: string) => `T#${tenantId}#INBOX`;
export const inboxByProcess = (tenantId: string, processId: string) =>
  `T#${tenantId}#P#${processId}#INBOX`;
export const inboxListSk = (createdAt: string, itemId: string) => `${createdAt}#${itemId}`;

/** Tunables overrides per tenant (`TENANT`) or per project (`PJ#<project>`). */
export const settingsPk = (tenantId: string) => `T#${tenantId}#SETTINGS`;
export const settingsSk = (projectId?: string) => (projectId ? `PJ#${projectId}` : "TENANT");

/**
 * A tenant's request count for one rate window (core/domain/rate-limit.ts): a new item for each
 * window, never read again once the window is over; TTL removes it.
 */
export const rateWindowPk = (tenantId: string, windowStartSeconds: number) => `T#${tenantId}#RATE#${windowStartSeconds}`;
export const RATE_SK = "RATE";
/** A tenant's import count for one minute (core/domain/rate-limit.ts, IMPORT_WINDOW_MS), removed by TTL like the request counts. */
export const importWindowPk = (tenantId: string, windowStartSeconds: number) => `T#${tenantId}#RATE#IMPORT#${windowStartSeconds}`;
/** Model usage per UTC day (`D#<YYYY-MM-DD>`) and the operator's budget (`BUDGET`) of a tenant. */
export const usagePk = (tenantId: string) => `T#${tenantId}#USAGE`;
export const usageDaySk = (day: string) => `D#${day}`;
export const BUDGET_SK = "BUDGET";
/** The tenant's erasure mark, in its usage partition (core/ports/store.ts, TENANT_ERASURE_MARK_DAYS). */
export const TENANT_ERASED_SK = "ERASED";
