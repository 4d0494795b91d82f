/**
 * A client of the local runner that records every request as `METHOD /path` (and its JSON body,
 * when it has one), to count what an adapter costs and see what it sent.
 */
import { createMemoryClient, type MemoryClient } from "../../client/index.js";

export function countingClient(baseUrl: string, apiKey: string): { client: MemoryClient; requests: string[]; bodies: unknown[] } {
  const requests: string[] = [];
  const bodies: unknown[] = [];
  const client = createMemoryClient({
    baseUrl,
    apiKey,
    fetch: (url, init) => {
      requests.push(`${init?.method ?? "GET"} ${new URL(String(url)).pathname}`);
      bodies.push(typeof init?.body === "string" ? JSON.parse(init.body) : undefined);
      return fetch(url, init);
    },
  });
  return { client, requests, bodies };
}
