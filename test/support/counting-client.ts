/** A client of the local runner that records every request as `METHOD /path`, to count what an adapter costs. */
import { createMemoryClient, type MemoryClient } from "../../client/index.js";

export function countingClient(baseUrl: string, apiKey: string): { client: MemoryClient; requests: string[] } {
  const requests: string[] = [];
  const client = createMemoryClient({
    baseUrl,
    apiKey,
    fetch: (url, init) => {
      requests.push(`${init?.method ?? "GET"} ${new URL(String(url)).pathname}`);
      return fetch(url, init);
    },
  });
  return { client, requests };
}
