/**
 * Who may act for which tenant through an incoming event (docs/deploy.md, "Events from another
 * account"). An event names its tenant in its detail, which its publisher writes; what the
 * publisher cannot write is who it is: EventBridge stamps the event's `account` with the account
 * that put it. So each publisher maps to the tenants it may act for, and an event for any other
 * tenant is dropped (core/adapters/events/handlers.ts).
 */
import { Id } from "./fields.js";

/** Publisher (an AWS account id) -> its tenants, or `any` (the `*` of the setting). */
export type PublisherGrants = ReadonlyMap<string, ReadonlySet<string> | "any">;

/** Decides whether the event's publisher (unset: put by no one outside the service) may act for the tenant. */
export type PublisherPolicy = (publisher: string | undefined, tenantId: string) => boolean;

/**
 * Parses `111111111111=team-a,111111111111=team-b,222222222222=*`: one `account=tenant` pair per
 * grant, an account listed once per tenant, `*` for every tenant. A bad entry throws, naming it.
 */
export function parsePublisherGrants(spec: string, name = "EVENT_PUBLISHERS"): PublisherGrants {
  const grants = new Map<string, Set<string> | "any">();
  for (const entry of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const at = entry.indexOf("=");
    const account = entry.slice(0, at).trim();
    const tenant = entry.slice(at + 1).trim();
    if (at < 0 || !/^\d{12}$/.test(account)) throw new Error(`${name}: '${entry}' is not <12-digit account id>=<tenant or *>`);
    if (tenant !== "*" && !Id.safeParse(tenant).success) throw new Error(`${name}: '${entry}' names no valid tenant id (or *)`);
    const held = grants.get(account);
    if (tenant === "*" || held === "any") grants.set(account, "any");
    else grants.set(account, (held ?? new Set<string>()).add(tenant));
  }
  return grants;
}

/** The accounts a grant list names (the bus policy lets exactly these put events). */
export const publisherAccounts = (grants: PublisherGrants): string[] => [...grants.keys()];

/**
 * The deployed policy: the service's own account acts for every tenant (its answer endpoint
 * publishes InboxItemAnswered for any of them), the granted accounts for their tenants, an event
 * without an account for none.
 */
export function accountPublishers(grants: PublisherGrants, serviceAccount: string | undefined): PublisherPolicy {
  return (publisher, tenantId) => {
    if (publisher === undefined) return false;
    if (publisher === serviceAccount) return true;
    const granted = grants.get(publisher);
    return granted === "any" || (granted?.has(tenantId) ?? false);
  };
}

/** The account of a Lambda function's ARN (`arn:aws:lambda:<region>:<account>:function:<name>`). */
export const accountOfArn = (arn: string | undefined): string | undefined => /^arn:[^:]+:[^:]+:[^:]*:(\d{12}):/.exec(arn ?? "")?.[1];
