/** The local runner on a random port over a fresh table, plus a small fetch helper. */
import { randomUUID } from "node:crypto";
import { startLocalService, type LocalServiceOptions } from "../../local/server.js";
import { dynamoEndpoint } from "./dynamo.js";

export const KEY_A = "key-a";
export const KEY_B = "key-b";

export async function startTestService(options: Partial<LocalServiceOptions> = {}) {
  const service = await startLocalService({
    port: 0,
    quiet: true,
    dynamoEndpoint: dynamoEndpoint(),
    tableName: `svc-${randomUUID().slice(0, 8)}`,
    ...options,
    env: { MEMORY_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`, SUMMARIZER: "offline", ...options.env },
  });
  return { service, api: apiClient(service.url) };
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
