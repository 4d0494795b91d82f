/**
 * The local runner on a random port over a fresh table, plus a small fetch helper. While one runs,
 * every answer it gives to this process is checked against docs/openapi.json.
 */
import { randomUUID } from "node:crypto";
import { startLocalService, type LocalServiceOptions } from "../../local/server.js";
import { dynamoEndpoint } from "./dynamo.js";
import { checkedFetch, documentChecker, type ContractChecker, type ContractViolation } from "./openapi-contract.js";

export const KEY_A = "key-a";
export const KEY_B = "key-b";

/** `contract` replaces docs/openapi.json's checker (to show that the check fails a test). */
export async function startTestService(options: Partial<LocalServiceOptions> & { contract?: ContractChecker } = {}) {
  const { contract, ...local } = options;
  const service = await startLocalService({
    port: 0,
    quiet: true,
    dynamoEndpoint: dynamoEndpoint(),
    tableName: `svc-${randomUUID().slice(0, 8)}`,
    ...local,
    env: { MEMORY_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`, SUMMARIZER: "offline", ...local.env },
  });
  watchContract(service.url, contract ? () => contract : documentChecker);
  const stop = service.stop;
  service.stop = async () => {
    await stop();
    unwatchContract(service.url);
  };
  return { service, api: apiClient(service.url) };
}

/** The checker of each running service, by origin; built on the first answer it checks. */
const watched = new Map<string, () => ContractChecker>();
const violations: ContractViolation[] = [];
let plainFetch: typeof fetch | undefined;

/**
 * The contract check sits in the global fetch, so the npm client, the framework adapters and raw
 * fetch calls of a test are all checked without each naming it.
 */
function watchContract(url: string, checker: () => ContractChecker) {
  if (!plainFetch) {
    plainFetch = globalThis.fetch;
    globalThis.fetch = checkedFetch(plainFetch, { checkerOf: (origin) => watched.get(origin)?.(), onViolation: (v) => violations.push(v) });
  }
  watched.set(url, checker);
}

/**
 * A violation already rejected the request that met it; it is raised again here because a caller
 * may have caught it (an adapter turning errors into tool results, a test expecting any rejection).
 */
function unwatchContract(url: string) {
  watched.delete(url);
  if (watched.size === 0 && plainFetch) {
    globalThis.fetch = plainFetch;
    plainFetch = undefined;
  }
  const found = violations.splice(0);
  if (found.length > 0) throw new Error(`answers docs/openapi.json does not describe:\n${found.map((v) => v.message).join("\n")}`);
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

export function apiClient(baseUrl: string) {
  return async function api<T = any>(
    method: string,
    path: string,
    options: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const key = options.key === undefined ? KEY_A : options.key;
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(options.body !== undefined || options.rawBody !== undefined ? { "content-type": "application/json" } : {}),
        ...options.headers,
      },
      body: options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  };
}
