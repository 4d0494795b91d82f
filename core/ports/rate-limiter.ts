/** Counts a tenant's requests; a refusal says when the tenant may try again. */
import type { RateDecision } from "../domain/rate-limit.js";

export interface RateLimiter {
  /** Takes one request of the tenant's current window, or refuses it when the window is spent. */
  take(tenantId: string): Promise<RateDecision>;
}
